package serve

import (
	"path/filepath"
	"testing"
)

// A session's settings are the session's, not a connection's: a mode or
// option that one attached client changes reaches every attachment as
// current_mode_update and config_option_update, so no client shows a
// stale mode or option. Each hears it in its own dialect.
func TestSettingsChangesReachEveryAttachment(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowScript())
	d := startDaemon(t, 1, "-m", "script:"+script, "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	// A takes boolean options, so its option set has multitask; B's,
	// without them, does not (each connection's own dialect).
	initializeWith(a, map[string]any{"session": map[string]any{"configOptions": map[string]any{"boolean": map[string]any{}}}})
	sid := newSession(a, dir)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})

	a.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"})
	modeIs := func(mode string) func(map[string]any) bool {
		return func(p map[string]any) bool {
			u, _ := p["update"].(map[string]any)
			return p["sessionId"] == sid && u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == mode
		}
	}
	if !b.waitNote("session/update", modeIs("plan")) {
		t.Errorf("B got no current_mode_update after A set the mode to plan")
	}

	b.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "multitask", "type": "boolean", "value": true})
	multitaskOn := func(p map[string]any) bool {
		u, _ := p["update"].(map[string]any)
		if p["sessionId"] != sid || u["sessionUpdate"] != "config_option_update" {
			return false
		}
		opts, _ := u["configOptions"].([]any)
		for _, o := range opts {
			if m, _ := o.(map[string]any); m["id"] == "multitask" && m["currentValue"] == true {
				return true
			}
		}
		return false
	}
	if !a.waitNote("session/update", multitaskOn) {
		t.Errorf("A got no config_option_update with multitask on after B wrote it")
	}
	// B wrote it, so B heard first; its option sets have no multitask.
	if !b.waitNote("session/update", func(p map[string]any) bool {
		u, _ := p["update"].(map[string]any)
		return u["sessionUpdate"] == "config_option_update"
	}) {
		t.Fatal("B got no config_option_update after its own write")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range b.note {
		p, _ := n["params"].(map[string]any)
		u, _ := p["update"].(map[string]any)
		opts, _ := u["configOptions"].([]any)
		for _, o := range opts {
			if m, _ := o.(map[string]any); m["id"] == "multitask" {
				t.Errorf("B, which takes no boolean options, was sent the multitask boolean")
			}
		}
	}
}
