package serve

import (
	"path/filepath"
	"strings"
	"testing"
)

// setMultitask writes the multitask option from c and returns the error
// object (nil: written).
func (c *client) setMultitask(sid string, on bool) map[string]any {
	c.t.Helper()
	return c.callErr("session/set_config_option", map[string]any{"sessionId": sid, "configId": "multitask", "type": "boolean", "value": on})
}

// ownerRefusal fails unless e is the owner rule's -32602.
func ownerRefusal(t *testing.T, what string, e map[string]any) {
	t.Helper()
	data, _ := e["data"].(map[string]any)
	details, _ := data["details"].(string)
	if e == nil || e["code"] != float64(-32602) || !strings.Contains(details, "owned by another connection") {
		t.Errorf("%s: %v; want -32602 naming the owner rule", what, e)
	}
}

// C56 under the daemon: ownership is the hub's rule across its
// connections, the same one two corvid processes on a shared store follow.
// The connection that last created, loaded or resumed a session owns it;
// a load from a second client of the daemon (which attaches to the live
// session) takes it over, and the first client's owner-only writes are
// refused until it loads the session again.
func TestOwnershipIsTheHubsRuleAcrossConnections(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowScript())
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	if e := a.setMultitask(sid, true); e != nil {
		t.Fatalf("the creating connection's write: %v", e)
	}

	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	if e := b.setMultitask(sid, false); e != nil {
		t.Errorf("a write from the client that loaded (attached to) the session: %v", e)
	}
	ownerRefusal(t, "a write from the client that lost the session", a.setMultitask(sid, true))

	// Loading it again on A takes it back; B is refused now.
	a.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	if e := a.setMultitask(sid, true); e != nil {
		t.Errorf("a write after loading the session back: %v", e)
	}
	ownerRefusal(t, "a write from the client that lost it in turn", b.setMultitask(sid, false))

	// session/resume takes it over too.
	b.call("session/resume", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	if e := b.setMultitask(sid, false); e != nil {
		t.Errorf("a write from the client that resumed the session: %v", e)
	}
	ownerRefusal(t, "a write from the client that lost it to a resume", a.setMultitask(sid, true))
}
