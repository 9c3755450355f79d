package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/providers"
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
	if !strings.Contains(out.String(), "no config file; defaults apply") {
		t.Errorf("a home without config.toml is not reported as such")
	}
	if _, err := os.Stat(filepath.Join(config.DataDir(env), "sessions.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("doctor created the session store (%v); checking must not write it", err)
	}
}

// The model and the MCP commands a config names are checked, as `corvid acp`
// would use them: a mistyped provider fails doctor instead of only acp.
func TestDoctorChecksTheConfiguredModelAndMCPCommands(t *testing.T) {
	for _, tc := range []struct {
		config string
		want   []string
	}{
		{`model = "antropic:claude"`, []string{`[FAIL] model`, `did you mean anthropic?`}},
		{`model = "script:/nonexistent/s.json"`, []string{`[FAIL] model`, `/nonexistent/s.json`}},
		{"model = \"ollama:qwen3\"\n[mcp_servers.gone]\ncommand = \"corvid-no-such-mcp-server\"\n[mcp_servers.sh]\ncommand = \"sh\"",
			[]string{`[ok  ] model        ollama:qwen3`, `[FAIL] mcp gone`, `"corvid-no-such-mcp-server" not found`, `[ok  ] mcp sh`}},
	} {
		home := t.TempDir()
		env := config.MapEnv{"HOME": home, "CORVID_KEYRING": "off", "XDG_RUNTIME_DIR": filepath.Join(home, "run"), "PATH": os.Getenv("PATH")}
		if err := os.MkdirAll(config.ConfigDir(env), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(config.ConfigDir(env), "config.toml"), []byte(tc.config+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		d := doctor{env: env, cwd: t.TempDir(), self: []string{"false"}, timeout: time.Second, out: &out}
		d.run(context.Background())
		for _, want := range tc.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("config %q: checklist lacks %q:\n%s", tc.config, want, out.String())
			}
		}
		if !strings.Contains(out.String(), "[ok  ] config       read ") {
			t.Errorf("config %q: the file read is not named:\n%s", tc.config, out.String())
		}
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

// TestMain registers the providers as main does: doctor opens the
// configured model through them, as acp does.
func TestMain(m *testing.M) {
	providers.Register(llm.Default)
	os.Exit(m.Run())
}

// doctor reports what stops `corvid acp` as a FAIL and what acp would log as
// a warn, through the same checks (preflight); the test also starts acp's
// preflight directly to hold the two to each other.
func TestDoctorReportsWhatStopsOrWarnsACP(t *testing.T) {
	for _, tc := range []struct {
		config string
		want   []string
		stops  bool // acp exits 1 with this config
	}{
		{`default_mode = "yoloo"`, []string{`[FAIL] permissions  unknown mode "yoloo"`}, true},
		{"[permissions]\nallow = [\"raed(*)\"]", []string{`[warn] permissions  permission rule allow raed`, `names no known tool`}, false},
		{`model = "anthropic:claude-sonnet-4-5"`, []string{`[warn] model        the configured model anthropic:claude-sonnet-4-5 has no key (set ANTHROPIC_API_KEY`}, false},
		{`model = "openai:gtp-5-mini"`, []string{`[warn] model`, `is not in corvid's catalog; did you mean openai:gpt-5-mini?`}, false},
		{`defualt_mode = "ask"`, []string{`[FAIL] config`, `unknown keys defualt_mode (did you mean default_mode?)`}, true},
		{`sandbox = "strcit"`, []string{`[FAIL] config`, `sandbox must be`}, true},
	} {
		home := t.TempDir()
		env := config.MapEnv{"HOME": home, "CORVID_KEYRING": "off", "XDG_RUNTIME_DIR": filepath.Join(home, "run"), "OPENAI_API_KEY": "sk-test"}
		if err := os.MkdirAll(config.ConfigDir(env), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(config.ConfigDir(env), "config.toml"), []byte(tc.config+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		d := doctor{env: env, cwd: t.TempDir(), self: []string{"false"}, timeout: time.Second, out: &out}
		d.run(context.Background())
		for _, want := range tc.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("config %q: checklist lacks %q:\n%s", tc.config, want, out.String())
			}
		}
		file, err := config.Load(env, d.cwd)
		stops := err != nil || len((&acpCmd{}).preflight(env, file).problems) > 0
		if stops != tc.stops {
			t.Errorf("config %q: acp stops = %v, want %v", tc.config, stops, tc.stops)
		}
	}
}
