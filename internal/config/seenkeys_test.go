package config

import (
	"slices"
	"testing"
)

// TestCredentialRemembersKeysReadFromTheKeyring: a key that lives only in
// the OS keyring is handed to the redactor once corvid has read it.
func TestCredentialRemembersKeysReadFromTheKeyring(t *testing.T) {
	kr := newCountingKeyring()
	kr.keys["anthropic"] = "sk-ant-from-keyring-0123456789"
	defer SetKeyring(kr)()
	env := tempEnv(t)
	p, _ := LookupProvider("anthropic")
	if k, src := Credential(env, p); src != "keyring" || k != "sk-ant-from-keyring-0123456789" {
		t.Fatalf("Credential = %q from %q, want the keyring's key", k, src)
	}
	if !slices.Contains(KeyringKeysSeen(), "sk-ant-from-keyring-0123456789") {
		t.Errorf("KeyringKeysSeen() = %q, want the key read from the keyring", KeyringKeysSeen())
	}
}
