package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// attachedTrio starts a daemon on script; A opens a session in dir, B and
// C load it. dialects are A's, B's and C's ("" for plain ACP).
func attachedTrio(t *testing.T, script map[string]any, dialects [3]string, extra ...string) (dir, sid string, cs [3]*client) {
	t.Helper()
	dir = t.TempDir()
	path := writeScript(t, dir, script)
	d := startDaemon(t, 1, append([]string{"-m", "script:" + path, "--listen", "unix:" + filepath.Join(dir, "s.sock")}, extra...)...)
	for i := range cs {
		cs[i] = dial(t, d.sock)
		params := map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}
		if dialects[i] != "" {
			params["_meta"] = map[string]any{"corvid.dev/dialect": dialects[i]}
		}
		cs[i].call("initialize", params)
		if i == 0 {
			sid = newSession(cs[0], dir)
			continue
		}
		cs[i].call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	}
	return dir, sid, cs
}

// commandLists are the names in each available_commands_update c got.
func commandLists(c *client, sid string) [][]string {
	var out [][]string
	for _, u := range c.updatesOf(sid) {
		if u["sessionUpdate"] != "available_commands_update" {
			continue
		}
		var names []string
		cmds, _ := u["availableCommands"].([]any)
		for _, x := range cmds {
			m, _ := x.(map[string]any)
			n, _ := m["name"].(string)
			names = append(names, n)
		}
		out = append(out, names)
	}
	return out
}

// A command file added while three clients hold the session is offered to
// all three, not only to the one that opened it.
func TestCommandListChangeReachesEveryAttachment(t *testing.T) {
	dir, sid, cs := attachedTrio(t, slowScript(), [3]string{})
	p := filepath.Join(dir, ".corvid", "commands", "bench.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("---\ndescription: Run the benchmarks\n---\nRun the benchmarks.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		deadline := time.Now().Add(20 * time.Second)
		for {
			lists := commandLists(c, sid)
			if len(lists) > 0 && slices.Contains(lists[len(lists)-1], "bench") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("client %c was never offered /bench: %v", 'A'+i, lists)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// sessionEnds are the turn ids of the session_end updates c got, in
// order, and whether the last of them is c's last update of the session.
func sessionEnds(c *client, sid string) (ids []string, last bool) {
	us := c.updatesOf(sid)
	for i, u := range us {
		if u["sessionUpdate"] != "session_end" {
			continue
		}
		m, _ := u["_meta"].(map[string]any)
		id, _ := m["codebuddy.ai/conversationRequestId"].(string)
		ids = append(ids, id)
		last = i == len(us)-1
	}
	return ids, last
}

// A turn's session_end reaches every attachment that speaks CodeBuddy's
// dialect, with the turn's id, after the turn's updates; never a plain
// ACP attachment.
func TestSessionEndReachesEveryCodeBuddyAttachment(t *testing.T) {
	_, sid, cs := attachedTrio(t, slowScript(), [3]string{"codebuddy", "codebuddy", "acp"}, "--yolo")
	res := cs[1].call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go"),
		"_meta": map[string]any{"codebuddy.ai/conversationRequestId": turnID}})
	if res["stopReason"] != "end_turn" {
		t.Fatalf("B's prompt: %v", res)
	}
	for _, i := range []int{0, 1} {
		waitExact(t, cs[i], sid, fullSlowAnswer())
		deadline := time.Now().Add(10 * time.Second)
		ids, last := sessionEnds(cs[i], sid)
		for len(ids) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			ids, last = sessionEnds(cs[i], sid)
		}
		if !slices.Equal(ids, []string{turnID}) || !last {
			t.Errorf("CodeBuddy client %c got session_end for turns %q (last update: %v), want one for %s, last", 'A'+i, ids, last, turnID)
		}
	}
	waitExact(t, cs[2], sid, fullSlowAnswer())
	time.Sleep(200 * time.Millisecond)
	if ids, _ := sessionEnds(cs[2], sid); len(ids) > 0 {
		t.Errorf("the plain ACP client got session_end %q", ids)
	}
}

// modeMarks are, for each current_mode_update c got, the mode and how
// much of the answer's text c had been sent before it.
func modeMarks(c *client, sid string) []string {
	var out []string
	n := 0
	for _, u := range c.updatesOf(sid) {
		switch u["sessionUpdate"] {
		case "agent_message_chunk":
			ct, _ := u["content"].(map[string]any)
			s, _ := ct["text"].(string)
			n += len(s)
		case "current_mode_update":
			out = append(out, fmt.Sprintf("%v@%d", u["currentModeId"], n))
		}
	}
	return out
}

// Settings changed while a turn streams reach every attachment at the same
// point among the turn's updates: A, B and C see each mode change after
// the same text.
func TestSettingsChangesTakeOnePlaceAmongATurnsUpdates(t *testing.T) {
	text := strings.Repeat("abcdefgh", 400)
	script := map[string]any{"chunkSize": 4, "delayMs": 1, "responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": text}}},
	}}
	_, sid, cs := attachedTrio(t, script, [3]string{})
	answer := make(chan map[string]any, 1)
	go func() {
		answer <- cs[0].callErrOrResult("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	}()
	cs[1].waitText(sid, "abcdefgh")
	for i := range 30 {
		mode := []string{"plan", "default"}[i%2]
		cs[i%3].call("session/set_mode", map[string]any{"sessionId": sid, "modeId": mode})
	}
	if m := <-answer; stopReason(m) != "end_turn" {
		t.Fatalf("A's prompt: %v", m)
	}
	for _, c := range cs {
		waitExact(t, c, sid, text)
	}
	time.Sleep(200 * time.Millisecond)
	want := modeMarks(cs[0], sid)
	if len(want) != 30 {
		t.Fatalf("A got %d mode updates, want 30: %v", len(want), want)
	}
	for i, c := range cs[1:] {
		if got := modeMarks(c, sid); !slices.Equal(got, want) {
			t.Errorf("client %c saw the mode changes at %v\nA at %v", 'B'+i, got, want)
		}
	}
}
