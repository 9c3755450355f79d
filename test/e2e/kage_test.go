package e2e

// A kage client (docs/kage.md) replays the config option values it stored:
// kage's thinking levels and modes. corvid accepts them, maps them onto its
// own values (config.OptionAlias), and keeps showing its own.

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestKageClientReplaysItsStoredOptionValues(t *testing.T) {
	s := startCorvid(t, text("unused", 0), testkit.Options{})
	sid := s.ready(t, testkit.Minimal())
	for _, c := range []struct{ id, value, wantID, want string }{
		{"mode", "allow", "mode", "yolo"},
		{"mode", "ask", "mode", "ask"},
		{"mode", "deny", "mode", "deny"},
		{"mode", "default", "mode", "default"},
		{"thinking", "xhigh", "thought_level", "max"},
		{"thinking", "minimal", "thought_level", "low"},
		{"thinking", "off", "thought_level", "off"},
		{"thinking", "default", "thought_level", "high"},
		{"thought_level", "xhigh", "thought_level", "max"},
		{"thought_level", "medium", "thought_level", "medium"},
	} {
		opts, rerr := s.setOption(t, sid, c.id, c.value)
		if rerr != nil {
			t.Errorf("set %s=%s (a kage value): %v", c.id, c.value, rerr)
			continue
		}
		if got := currentValues(opts)[c.wantID]; got != c.want {
			t.Errorf("set %s=%s: %s is now %q, want corvid's %q", c.id, c.value, c.wantID, got, c.want)
		}
		for _, o := range opts {
			for _, kageOnly := range []string{"allow", "xhigh", "minimal"} {
				if slices.Contains(o.values(), kageOnly) {
					t.Errorf("option %s lists kage's value %q; configOptions show corvid's own values", o.ID, kageOnly)
				}
			}
		}
	}
	if _, rerr := s.setOption(t, sid, "mode", "reckless"); rerr == nil || rerr.Code != -32602 {
		t.Errorf("an unknown mode answered %v, want -32602", rerr)
	}
}

// TestKageDenyModeRefusesEveryCallWithoutAsking: kage's deny mode (corvid's
// deny) refuses even a read, and the client is never asked.
func TestKageDenyModeRefusesEveryCallWithoutAsking(t *testing.T) {
	s := startCorvid(t, toolScript("read", map[string]any{"path": "notes.txt"}), testkit.Options{Permission: testkit.AllowOnce()})
	sid := s.ready(t, testkit.Minimal())
	if err := os.WriteFile(filepath.Join(s.workspace, "notes.txt"), []byte("secret 4711\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, rerr := s.setOption(t, sid, "mode", "deny"); rerr != nil {
		t.Fatalf("set mode=deny: %v", rerr)
	}
	if stop, rerr := s.Prompt(s.ctx, sid, "read it"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if st := finalToolStatus(s.Updates(sid)); st != "failed" {
		t.Errorf("the read ended %q in deny mode, want failed", st)
	}
	if n := len(s.Permissions()); n != 0 {
		t.Errorf("%d permission requests in deny mode, want none", n)
	}
}

// TestKageAllowModeFlagStartsInYolo: --mode allow (kage's word) starts
// sessions in corvid's yolo.
func TestKageAllowModeFlagStartsInYolo(t *testing.T) {
	s := startCorvid(t, text("unused", 0), testkit.Options{}, "--mode", "allow")
	if _, rerr := s.Initialize(s.ctx, testkit.Minimal()); rerr != nil {
		t.Fatal(rerr)
	}
	if got := currentValues(s.newSetup(t).ConfigOptions)["mode"]; got != "yolo" {
		t.Errorf("--mode allow started the session in %q, want yolo", got)
	}
}
