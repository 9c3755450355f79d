package security

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// A setting the store could not save is not reported as taken (durable
// before visible, ARCHITECTURE.md §3): on a full disk, set_config_option,
// session/set_mode and session/set_multitask answer the store's error,
// send no config_option_update or current_mode_update, and leave the
// session's settings as they were, in this process and in the store.
func TestFullDiskSettingWritesAnswerTheStoreErrorAndChangeNothing(t *testing.T) {
	small := mountSmallFS(t, 2<<20)
	home := filepath.Join(small, "home")
	ws := t.TempDir()
	script := rtScript(t, rtText("unused"))
	env := []string{"CORVID_HOME=" + home}
	c := rtStart(t, script, testkit.Options{Dir: ws, Env: env})
	sid := c.newSessionIn(t, ws)
	filler := fill(t, small)

	writes := []struct {
		method string
		params map[string]any
	}{
		{"session/set_config_option", map[string]any{"sessionId": sid, "configId": "mode", "value": "yolo"}},
		{"session/set_mode", map[string]any{"sessionId": sid, "modeId": "edit"}},
		{"session/set_multitask", map[string]any{"sessionId": sid, "enabled": true}},
		{"session/set_config_option", map[string]any{"sessionId": sid, "configId": "multitask", "type": "boolean", "value": true}},
		{"session/set_config_option", map[string]any{"sessionId": sid, "configId": "codeMode", "value": "all"}},
	}
	for _, w := range writes {
		raw, rerr := c.Call(c.ctx, w.method, w.params)
		if rerr == nil {
			t.Errorf("%s %v on a full disk answered success: %s", w.method, w.params, raw)
			continue
		}
		if rerr.Code != -32603 || !strings.Contains(rerr.Message, "session store failed") || !strings.Contains(rerr.Message, "full") {
			t.Errorf("%s on a full disk: %d %q, want -32603 naming the store and the full disk", w.method, rerr.Code, rerr.Message)
		}
	}
	for _, u := range c.Updates(sid) {
		if u.SessionUpdate == "config_option_update" || u.SessionUpdate == "current_mode_update" {
			t.Errorf("a write that was not stored sent %s: %s", u.SessionUpdate, u.Raw)
		}
	}

	// Once space is back, the session still has its settings: a write of
	// another option answers the whole set.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	var res struct {
		ConfigOptions []struct {
			ID           string          `json:"id"`
			CurrentValue json.RawMessage `json:"currentValue"`
		} `json:"configOptions"`
	}
	c.MustCall(c.ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "mode", "value": "plan"}, &res)
	var multitask struct {
		OK, On, Already bool
	}
	c.MustCall(c.ctx, "session/set_multitask", map[string]any{"sessionId": sid}, &multitask)
	if !multitask.OK || !multitask.On || multitask.Already {
		t.Errorf("toggling multitask after the failed writes = %+v, want it turned on (it was off)", multitask)
	}
	for _, o := range res.ConfigOptions {
		if o.ID == "codeMode" && string(o.CurrentValue) != `"off"` {
			t.Errorf("codeMode is %s after its write failed, want \"off\"", o.CurrentValue)
		}
	}
	if code, _ := c.Close(); code != 0 {
		t.Errorf("exit %d", code)
	}

	// The store holds what the client was told: plan, then multitask on.
	c2 := rtStart(t, script, testkit.Options{Dir: ws, Env: env})
	raw := c2.MustCall(c2.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}, nil)
	var loaded struct {
		Modes struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
	}
	if err := json.Unmarshal(raw, &loaded); err != nil || loaded.Modes.CurrentModeID != "plan" {
		t.Errorf("reloaded mode %q (%v), want plan: %s", loaded.Modes.CurrentModeID, err, raw)
	}
}
