package reliability

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corvidstore "github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/testkit"
)

// killTrials is how many SIGKILLs TestKillNineAtRandomPoints delivers.
const killTrials = 20

// A kill -9 at any point of a turn (thinking, text, a tool call, the answer
// after it) leaves a store that opens, passes SQLite's integrity check and
// loads the session in a new process; the replay is a prefix of what the
// script says, the new process takes the session over and a new prompt works.
//
// ARCHITECTURE.md §3 also promises that events are stored as they happen, so no
// update the client already received may be missing from the replay: every
// text the client saw must be a prefix of the replayed text of its kind, and
// every tool call it saw must be replayed.
func TestKillNineAtRandomPointsKeepsTheSessionLoadable(t *testing.T) {
	rng := seeded(t)
	thought := uniqueText("t", 30)
	first, second := uniqueText("a", 60), uniqueText("b", 60)
	var lost []string
	for trial := range killTrials {
		st := newStore(t, map[string]any{"onExhausted": "repeat-last", "responses": []any{
			map[string]any{"chunkSize": 3, "delayMs": 2, "parts": []any{
				part("thinking", thought), part("text", first),
				map[string]any{"type": "tool_call", "id": "call_ls", "name": "read", "input": map[string]any{"path": "notes.txt"}},
			}},
			map[string]any{"chunkSize": 3, "delayMs": 2, "parts": []any{part("text", second)}},
		}})
		writeFile(t, filepath.Join(st.workspace, "notes.txt"), "alpha\n")
		// Even trials kill after a random delay; odd ones right after a random
		// update arrived, the moment a lost store write would show most.
		delay := time.Duration(rng.IntN(160)) * time.Millisecond
		afterUpdates := 0
		if trial%2 == 1 {
			delay, afterUpdates = 0, 1+rng.IntN(45)
		}
		if loss := killTrial(t, st, trial, delay, afterUpdates, thought, first+second); loss != "" {
			lost = append(lost, loss)
		}
		if t.Failed() {
			t.Fatalf("trial %d (kill after %v or %d updates) failed; the seed above replays it", trial, delay, afterUpdates)
		}
	}
	// Durable before visible (ARCHITECTURE.md §3): an update reaches the client only
	// after its event is committed, so a SIGKILL can lose nothing the client saw.
	for _, l := range lost {
		t.Errorf("the replay lacks updates the client had already received: %s", l)
	}
}

// killTrial runs one turn in process A, kills it after delay or once
// afterUpdates history updates arrived, and checks process B's view of the
// session. It returns a description of what the replay lost, or "".
func killTrial(t *testing.T, st *store, trial int, delay time.Duration, afterUpdates int, thought, answer string) string {
	t.Helper()
	a := st.start(t, "--yolo")
	sid := a.newSession(t)
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "read the notes"))
	time.Sleep(delay)
	for n := 0; n < afterUpdates; n++ {
		if _, err := a.WaitUpdate(a.ctx, func(u testkit.Update) bool { return u.SessionID == sid && testkit.IsHistory(u.SessionUpdate) }); err != nil {
			t.Fatalf("trial %d: waiting for update %d: %v", trial, n+1, err)
		}
	}
	_ = p
	a.Kill()
	seen := a.Updates(sid)

	b := st.start(t, "--yolo")
	replay := b.load(t, sid)

	var loss []string
	for _, k := range []struct{ kind, full string }{
		{"agent_thought_chunk", thought},
		{"agent_message_chunk", answer},
	} {
		got, want := testkit.TextOf(replay, k.kind), testkit.TextOf(seen, k.kind)
		if !strings.HasPrefix(k.full, got) {
			t.Errorf("trial %d: replayed %s %q is not a prefix of the script's %q", trial, k.kind, shorten(got), shorten(k.full))
		}
		if !strings.HasPrefix(got, want) {
			loss = append(loss, fmt.Sprintf("%s: client saw %d chars, replay has %d", k.kind, len(want), len(got)))
		}
	}
	replayedTools := map[string]bool{}
	for _, u := range testkit.OfKind(replay, "tool_call") {
		replayedTools[u.ToolCallID] = true
	}
	for _, u := range testkit.OfKind(seen, "tool_call") {
		if !replayedTools[u.ToolCallID] {
			loss = append(loss, "tool call "+u.ToolCallID+" not replayed")
		}
	}
	if len(testkit.History(seen)) > 0 {
		if u := testkit.TextOf(replay, "user_message_chunk"); u != "read the notes" {
			loss = append(loss, fmt.Sprintf("prompt replayed as %q", u))
		}
	}

	checkStoreIntact(t, b.ctx, st.dbPath(), sid)
	stop, rerr := b.Prompt(b.ctx, sid, "go on")
	if rerr != nil || stop != "end_turn" {
		t.Errorf("trial %d: prompt in process B after the kill: stop %q, error %v", trial, stop, rerr)
	}
	if code, took := b.Close(); code != 0 {
		t.Errorf("trial %d: process B exited %d after %v", trial, code, took)
	}
	if len(loss) == 0 {
		return ""
	}
	return fmt.Sprintf("trial %d (kill after %v, %d history updates seen): %s", trial, delay, len(testkit.History(seen)), strings.Join(loss, "; "))
}

// checkStoreIntact opens the database as another process would: SQLite's
// integrity check passes and the session's events read back.
func checkStoreIntact(t *testing.T, ctx context.Context, dbPath, sid string) {
	t.Helper()
	s, err := corvidstore.Open(dbPath)
	if err != nil {
		t.Errorf("open the store after the kill: %v", err)
		return
	}
	defer s.Close()
	if _, err := s.Events(ctx, sid); err != nil {
		t.Errorf("events of %s: %v", sid, err)
	}
	if _, err := s.GetSession(ctx, sid); err != nil {
		t.Errorf("session %s: %v", sid, err)
	}
	db, err := sql.Open("sqlite", dbPath) // the driver the store registered
	if err != nil {
		t.Errorf("open %s: %v", dbPath, err)
		return
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check of %s: %q %v", dbPath, res, err)
	}
}
