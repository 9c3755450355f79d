package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestDoctorPassesOnAFreshHomeAndChecksItsOwnConformance(t *testing.T) {
	bin := testkit.BuildCorvid(t)
	home := t.TempDir()
	env := config.MapEnv{"HOME": home, "CORVID_KEYRING": "off", "XDG_RUNTIME_DIR": filepath.Join(home, "run")}
	var out bytes.Buffer
	d := doctor{env: env, cwd: t.TempDir(), self: []string{bin, "acp"}, timeout: 10 * time.Second, out: &out}
	ok := d.run(context.Background())
	t.Logf("\n%s", out.String())
	if !ok {
		t.Fatal("doctor failed on a fresh home")
	}
	for _, want := range []string{"[ok  ] config", "[ok  ] sessions", "[warn] keyring", "[ok  ] control dir", "[ok  ] conformance", "[warn] credentials"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("checklist lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(config.DataDir(env), "sessions.db")); err != nil {
		t.Errorf("session store not created: %v", err)
	}
}

func TestDoctorFailsOnACorruptStoreAndABrokenAgent(t *testing.T) {
	home := t.TempDir()
	env := config.MapEnv{"HOME": home, "CORVID_KEYRING": "off", "XDG_RUNTIME_DIR": filepath.Join(home, "run")}
	db := filepath.Join(config.DataDir(env), "sessions.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, []byte("this is not a database, just text long enough to have a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// `false` exits at once: no conformance check can pass.
	d := doctor{env: env, cwd: t.TempDir(), self: []string{"false"}, timeout: 2 * time.Second, out: &out}
	if d.run(context.Background()) {
		t.Fatalf("doctor passed:\n%s", out.String())
	}
	for _, want := range []string{"[FAIL] sessions", "[FAIL] conformance"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("checklist lacks %q:\n%s", want, out.String())
		}
	}
}
