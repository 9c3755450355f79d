package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// memKeyring is an in-memory keyring; failing makes every call fail the way
// a missing Secret Service does.
type memKeyring struct {
	mu      sync.Mutex
	m       map[string]string
	failing bool
	block   chan struct{} // when set, calls wait on it (a hung keyring)
	calls   int
}

func (k *memKeyring) do() error {
	if k.block != nil {
		<-k.block
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls++
	if k.failing {
		return errors.New("dbus: org.freedesktop.secrets not provided")
	}
	if k.m == nil {
		k.m = map[string]string{}
	}
	return nil
}

func (k *memKeyring) Get(service, user string) (string, error) {
	if err := k.do(); err != nil {
		return "", err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[service+"/"+user]
	if !ok {
		return "", ErrKeyNotFound
	}
	return v, nil
}

func (k *memKeyring) Set(service, user, secret string) error {
	if err := k.do(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[service+"/"+user] = secret
	return nil
}

func (k *memKeyring) Delete(service, user string) error {
	if err := k.do(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.m[service+"/"+user]; !ok {
		return ErrKeyNotFound
	}
	delete(k.m, service+"/"+user)
	return nil
}

func tempEnv(t *testing.T) MapEnv {
	t.Helper()
	home := t.TempDir()
	return MapEnv{"HOME": home}
}

func openai(t *testing.T) Provider {
	p, ok := LookupProvider("openai")
	if !ok {
		t.Fatal("openai is not a provider")
	}
	return p
}

func TestLoginWithUnavailableKeyringWritesPrivateFile(t *testing.T) {
	defer SetKeyring(&memKeyring{failing: true})()
	env := tempEnv(t)
	const key = "sk-test-secret-123"

	where, err := Login(env, "openai", key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(env["HOME"], ".local", "share", "corvid", "auth.json")
	if where != "file:"+path {
		t.Fatalf("where = %q, want file:%s", where, path)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("auth.json mode = %v, want 0600", st.Mode().Perm())
	}
	got, src := Credential(env, openai(t))
	if got != key || src != "file:"+path {
		t.Fatalf("Credential = %q from %q", got, src)
	}
	for _, s := range Status(env) {
		if strings.Contains(s.Source, key) || strings.Contains(s.BaseURL, key) {
			t.Fatalf("status leaks the key: %+v", s)
		}
		if s.Provider.Name == "openai" && (!s.Configured || s.Source != "file:"+path) {
			t.Fatalf("openai status = %+v", s)
		}
		if s.Provider.Name == "anthropic" && s.Configured {
			t.Fatalf("anthropic configured without a key: %+v", s)
		}
		if s.Provider.Name == "ollama" && (!s.Configured || s.Source != "none needed") {
			t.Fatalf("ollama status = %+v", s)
		}
	}

	removed, err := Logout(env, "openai")
	if err != nil || len(removed) != 1 || removed[0] != "file:"+path {
		t.Fatalf("Logout = %v, %v", removed, err)
	}
	if k, _ := Credential(env, openai(t)); k != "" {
		t.Fatal("key still found after logout")
	}
}

func TestLoginPrefersKeyringAndEnvWins(t *testing.T) {
	kr := &memKeyring{}
	defer SetKeyring(kr)()
	env := tempEnv(t)

	where, err := Login(env, "openai", "sk-keyring")
	if err != nil || where != "keyring" {
		t.Fatalf("Login = %q, %v", where, err)
	}
	if _, err := os.Stat(AuthFile(env)); err == nil {
		t.Fatal("auth.json written although the keyring worked")
	}
	if k, src := Credential(env, openai(t)); k != "sk-keyring" || src != "keyring" {
		t.Fatalf("Credential = %q, %q", k, src)
	}
	env["OPENAI_API_KEY"] = "sk-env"
	if k, src := Credential(env, openai(t)); k != "sk-env" || src != "env:OPENAI_API_KEY" {
		t.Fatalf("Credential = %q, %q; env must win", k, src)
	}
	removed, err := Logout(env, "openai")
	if err != nil || len(removed) != 1 || removed[0] != "keyring" {
		t.Fatalf("Logout = %v, %v", removed, err)
	}
}

func TestKeyringUnavailableIsRememberedAndFallsThrough(t *testing.T) {
	kr := &memKeyring{failing: true}
	defer SetKeyring(kr)()
	env := tempEnv(t)
	for range 3 {
		if k, src := Credential(env, openai(t)); k != "" || src != "" {
			t.Fatalf("Credential = %q, %q", k, src)
		}
	}
	if kr.calls != 1 {
		t.Fatalf("keyring called %d times; a failed keyring must be skipped afterwards", kr.calls)
	}
}

func TestHungKeyringTimesOut(t *testing.T) {
	kr := &memKeyring{block: make(chan struct{})}
	defer close(kr.block)
	defer SetKeyring(kr)()
	keyringMu.Lock()
	keyringTimeout = 50 * time.Millisecond
	keyringMu.Unlock()
	defer func() { keyringMu.Lock(); keyringTimeout = KeyringTimeout; keyringMu.Unlock() }()

	env := tempEnv(t)
	start := time.Now()
	where, err := Login(env, "groq", "gsk-1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(where, "file:") {
		t.Fatalf("where = %q, want the file", where)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Login took %v", d)
	}
}

func TestKeyringDisabledByEnv(t *testing.T) {
	kr := &memKeyring{}
	defer SetKeyring(kr)()
	env := tempEnv(t)
	env["CORVID_KEYRING"] = "off"
	if where, err := Login(env, "openai", "k"); err != nil || !strings.HasPrefix(where, "file:") {
		t.Fatalf("Login = %q, %v", where, err)
	}
	if kr.calls != 0 {
		t.Fatal("keyring used although CORVID_KEYRING=off")
	}
}

func TestLoginRejectsEmptyKeyAndBadName(t *testing.T) {
	defer SetKeyring(nil)()
	env := tempEnv(t)
	if _, err := Login(env, "openai", "  "); err == nil {
		t.Fatal("empty key accepted")
	}
	if _, err := Login(env, "a/b", "k"); err == nil {
		t.Fatal("provider name with / accepted")
	}
}

func TestEveryProviderHasWhatItNeeds(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Providers {
		if seen[p.Name] {
			t.Errorf("%s listed twice", p.Name)
		}
		seen[p.Name] = true
		if p.API == "" || p.Title == "" || len(p.KeyVars) == 0 || p.BaseURLVar == "" {
			t.Errorf("%s: incomplete: %+v", p.Name, p)
		}
		if p.API != APIAnthropic && p.BaseURL == "" {
			t.Errorf("%s: no default base URL", p.Name)
		}
	}
	for _, local := range []string{"ollama", "lmstudio", "llamacpp", "vllm"} {
		if p, ok := LookupProvider(local); !ok || p.NeedsKey {
			t.Errorf("%s: want a keyless provider, got %+v", local, p)
		}
	}
}
