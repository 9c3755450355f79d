package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	gokeyring "github.com/zalando/go-keyring"
)

// TestSecretServiceUsersMatchesGet checks the one-call listing against
// go-keyring's own Get on a real Secret Service (e.g. gnome-keyring in
// dbus-run-session). It uses a service name of its own, never corvid's.
func TestSecretServiceUsersMatchesGet(t *testing.T) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		t.Skip("no D-Bus session bus: no Secret Service to test against (run under dbus-run-session with gnome-keyring unlocked)")
	}
	service := fmt.Sprintf("corvid-test-%d", os.Getpid())
	if _, err := (systemKeyring{}).Users(service); err != nil {
		t.Skipf("no usable Secret Service: %v", err)
	}
	stored := []string{"anthropic", "fireworks", "xiaomi"}
	for _, u := range stored {
		if err := gokeyring.Set(service, u, "k-"+u); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, u := range stored {
			_ = gokeyring.Delete(service, u)
		}
	}()
	users, err := (systemKeyring{}).Users(service)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range allKeyringNames() {
		_, gerr := gokeyring.Get(service, name)
		if gerr != nil && !errors.Is(gerr, gokeyring.ErrNotFound) {
			t.Fatalf("Get(%s): %v", name, gerr)
		}
		if listed := slices.Contains(users, name); listed != (gerr == nil) {
			t.Errorf("%s: listed %v, but Get says err=%v", name, listed, gerr)
		}
	}
	if len(users) != len(stored) {
		t.Errorf("Users = %v; want %v", users, stored)
	}
}
