package e2e

// session/list, close, delete and fork, several processes on one store, and a
// store file that is corrupt or missing.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

type listedSession struct {
	SessionID string  `json:"sessionId"`
	Cwd       string  `json:"cwd"`
	Title     *string `json:"title"`
	UpdatedAt *string `json:"updatedAt"`
}

type listPage struct {
	Sessions   []listedSession `json:"sessions"`
	NextCursor string          `json:"nextCursor"`
}

// listAll walks session/list from the first page to the last and returns the
// sessions in the order served and the number of pages.
func (s *session) listAll(t *testing.T, cwd string) ([]listedSession, int) {
	t.Helper()
	var out []listedSession
	cursor, pages := "", 0
	for {
		params := map[string]any{}
		if cwd != "" {
			params["cwd"] = cwd
		}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page listPage
		s.MustCall(s.ctx, "session/list", params, &page)
		pages++
		if page.Sessions == nil {
			t.Errorf("page %d: sessions is missing or null, want an array", pages)
		}
		out = append(out, page.Sessions...)
		if page.NextCursor == "" {
			return out, pages
		}
		if pages > 1000 {
			t.Fatal("session/list never ends")
		}
		cursor = page.NextCursor
	}
}

func ids(list []listedSession) []string {
	out := make([]string, len(list))
	for i, l := range list {
		out[i] = l.SessionID
	}
	return out
}

// checkNewestFirst checks updatedAt is present, RFC 3339, and never rises.
func checkNewestFirst(t *testing.T, list []listedSession) {
	t.Helper()
	var prev time.Time
	for i, l := range list {
		if l.UpdatedAt == nil {
			t.Errorf("session %s has no updatedAt", l.SessionID)
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, *l.UpdatedAt)
		if err != nil {
			t.Errorf("session %s updatedAt %q: %v", l.SessionID, *l.UpdatedAt, err)
			continue
		}
		if i > 0 && at.After(prev) {
			t.Errorf("list is not newest first at %d: %s after %s", i, at, prev)
		}
		prev = at
	}
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func TestListPagesThroughManySessionsNewestFirstWithACwdFilter(t *testing.T) {
	st := newSharedHome(t, text("Listed.", 0))
	other := t.TempDir()
	s := st.start(t, testkit.Minimal())
	var all, inOther []string
	for i := range 120 {
		cwd := st.workspace
		if i%2 == 1 {
			cwd = other
		}
		id := s.NewSession(s.ctx, cwd)
		all = append(all, id)
		if cwd == other {
			inOther = append(inOther, id)
		}
	}

	got, pages := s.listAll(t, "")
	if pages < 3 {
		t.Errorf("120 sessions came in %d pages; the agent should enforce a page size", pages)
	}
	if !slices.Equal(ids(got), reversed(all)) {
		t.Errorf("walking every page gave %d sessions; want all 120, each once, newest first\n got %v\nwant %v", len(got), ids(got), reversed(all))
	}
	checkNewestFirst(t, got)

	filtered, _ := s.listAll(t, other)
	if !slices.Equal(ids(filtered), reversed(inOther)) {
		t.Errorf("cwd filter gave %d sessions, want the 60 in %s, newest first", len(filtered), other)
	}
	for _, l := range filtered {
		if l.Cwd != other {
			t.Errorf("cwd filter %s returned a session in %s", other, l.Cwd)
		}
	}

	// A turn gives the oldest session a title and moves it to the front.
	oldest := all[0]
	s.turn(t, oldest, "Summarise the release notes", "end_turn")
	var page listPage
	s.MustCall(s.ctx, "session/list", map[string]any{"cwd": st.workspace}, &page)
	if len(page.Sessions) == 0 || page.Sessions[0].SessionID != oldest {
		t.Fatalf("after a turn the first listed session is %v, want %s", ids(page.Sessions), oldest)
	}
	first := page.Sessions[0]
	if first.Title == nil || *first.Title != "Summarise the release notes" {
		t.Errorf("title after a turn %v, want the prompt", first.Title)
	}
	checkNewestFirst(t, page.Sessions)

	_, rerr := s.Call(s.ctx, "session/list", map[string]any{"cursor": "not-a-cursor"})
	if rerr == nil || rerr.Code != testkit.CodeInvalidParams {
		t.Errorf("invalid cursor: %v, want -32602", rerr)
	}
	_, rerr = s.Call(s.ctx, "session/list", map[string]any{"cwd": "relative/dir"})
	if rerr == nil || rerr.Code != testkit.CodeInvalidParams {
		t.Errorf("relative cwd filter: %v, want -32602", rerr)
	}
	var none listPage
	raw := s.MustCall(s.ctx, "session/list", map[string]any{"cwd": t.TempDir()}, &none)
	if none.Sessions == nil || len(none.Sessions) != 0 || none.NextCursor != "" {
		t.Errorf("list of a cwd without sessions: %s, want an empty array and no cursor", raw)
	}
}

// waitShell waits for a shell command carrying marker to run and returns its
// pid and its children's.
func waitShell(t *testing.T, marker string) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pids := testkit.ProcessesMatching(marker); len(pids) > 0 {
			for _, p := range pids {
				pids = append(pids, testkit.ChildrenOf(p)...)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell command %q never started", marker)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCloseKillsTheSessionsShellProcesses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds processes through /proc")
	}
	for _, background := range []bool{false, true} {
		t.Run(fmt.Sprint("background=", background), func(t *testing.T) {
			marker := fmt.Sprintf("corvid-e2e-close-%d-%d", os.Getpid(), time.Now().UnixNano())
			st := newSharedHome(t, map[string]any{"responses": []any{
				map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": "shell",
					"input": map[string]any{"command": "sleep 30 && echo " + marker, "background": background}}}},
				map[string]any{"parts": []any{map[string]any{"type": "text", "text": "started it"}}},
			}})
			// Minimal advertises no terminal: the shell runs inside corvid.
			s := st.start(t, testkit.Minimal(), "--yolo")
			sid := s.NewSession(s.ctx, st.workspace)
			p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "start a long command"))
			if background {
				if res, rerr := p.Wait(s.ctx); rerr != nil || !strings.Contains(string(res), "end_turn") {
					t.Fatalf("prompt: %s %v", res, rerr)
				}
			}
			pids := waitShell(t, marker)
			if len(pids) < 2 {
				t.Logf("shell processes %v (bash without a forked sleep?)", pids)
			}
			res, rerr := s.Call(s.ctx, "session/close", map[string]any{"sessionId": sid})
			if rerr != nil || strings.TrimSpace(string(res)) != "{}" {
				t.Fatalf("session/close: %s %v, want {}", res, rerr)
			}
			if !background {
				if res, rerr := p.Wait(s.ctx); rerr != nil || !strings.Contains(string(res), "cancelled") {
					t.Errorf("the prompt running at close answered %s %v, want stopReason cancelled", res, rerr)
				}
			}
			testkit.WaitGone(t, "after session/close", pids...)
			if _, rerr := s.Prompt(s.ctx, sid, "still there?"); rerr == nil {
				t.Error("a prompt to a closed session was accepted")
			}
		})
	}
}

func TestCloseOfAnUnknownSessionIsAnError(t *testing.T) {
	st := newSharedHome(t, text("x", 0))
	s := st.start(t, testkit.Minimal())
	if _, rerr := s.Call(s.ctx, "session/close", map[string]any{"sessionId": "sess_never_was"}); rerr == nil {
		t.Error("close of an unknown session succeeded")
	}
	sid := s.NewSession(s.ctx, st.workspace)
	s.MustCall(s.ctx, "session/close", map[string]any{"sessionId": sid}, nil)
	if _, rerr := s.Call(s.ctx, "session/close", map[string]any{"sessionId": sid}); rerr == nil {
		t.Error("a second close of the same session succeeded")
	}
	// Closing frees the runtime, not the history.
	s.load(t, sid)
}

func TestDeleteRemovesTheSessionEverywhere(t *testing.T) {
	st := newSharedHome(t, text("Keep this?", 0))
	a := st.start(t, testkit.Minimal())
	doomed := a.NewSession(a.ctx, st.workspace)
	kept := a.NewSession(a.ctx, st.workspace)
	a.turn(t, doomed, "first", "end_turn")
	a.turn(t, kept, "second", "end_turn")

	a.MustCall(a.ctx, "session/delete", map[string]any{"sessionId": doomed}, nil)
	_, rerr := a.Call(a.ctx, "session/load", map[string]any{"sessionId": doomed, "cwd": st.workspace, "mcpServers": []any{}})
	if rerr == nil || rerr.Code != testkit.CodeResourceNotFound || rerr.Message != "Session not found" {
		t.Errorf("load after delete: %v, want -32002 \"Session not found\"", rerr)
	}
	if _, rerr := a.Prompt(a.ctx, doomed, "are you there?"); rerr == nil {
		t.Error("a prompt to a deleted session was accepted")
	}
	for _, id := range []string{doomed, "sess_never_was"} {
		if res, rerr := a.Call(a.ctx, "session/delete", map[string]any{"sessionId": id}); rerr != nil {
			t.Errorf("delete of a missing session %s: %v, want success", id, rerr)
		} else if strings.TrimSpace(string(res)) != "{}" {
			t.Errorf("delete result %s, want {}", res)
		}
	}
	a.Close()

	b := st.start(t, testkit.Minimal())
	listed, _ := b.listAll(t, "")
	if got := ids(listed); !slices.Equal(got, []string{kept}) {
		t.Errorf("list after delete %v, want only %s", got, kept)
	}
	_, rerr = b.Call(b.ctx, "session/load", map[string]any{"sessionId": doomed, "cwd": st.workspace, "mcpServers": []any{}})
	if rerr == nil || rerr.Code != testkit.CodeResourceNotFound {
		t.Errorf("load of the deleted session in another process: %v, want -32002", rerr)
	}
	if replay := b.load(t, kept); testkit.TextOf(replay, "agent_message_chunk") != "Keep this?" {
		t.Errorf("the other session lost its history: %v", updateKinds(replay))
	}
}

func TestForkCarriesHistoryAndThenDiverges(t *testing.T) {
	st := newSharedHome(t, scriptFile(t, "fork"))
	a := st.start(t, testkit.Minimal())
	orig := a.NewSession(a.ctx, st.workspace)
	a.turn(t, orig, "original question", "end_turn")

	var forked struct {
		SessionID string `json:"sessionId"`
	}
	a.MustCall(a.ctx, "session/fork", map[string]any{"sessionId": orig, "cwd": st.workspace, "mcpServers": []any{}}, &forked)
	fork := forked.SessionID
	if fork == "" || fork == orig {
		t.Fatalf("fork returned session %q", fork)
	}
	// The fork remembers the original's turn: the script plays response 1.
	if txt := testkit.TextOf(a.turn(t, fork, "fork question", "end_turn"), "agent_message_chunk"); txt != "second answer" {
		t.Errorf("first turn of the fork answered %q: it did not inherit the context", txt)
	}
	a.turn(t, orig, "original again", "end_turn")
	_, rerr := a.Call(a.ctx, "session/fork", map[string]any{"sessionId": "sess_never_was", "cwd": st.workspace, "mcpServers": []any{}})
	if rerr == nil || rerr.Code != testkit.CodeResourceNotFound {
		t.Errorf("fork of an unknown session: %v, want -32002", rerr)
	}
	a.Close()

	b := st.start(t, testkit.Minimal())
	o := normalise(b.load(t, orig))
	if o.User != "original questionoriginal again" || strings.Contains(o.User, "fork") {
		t.Errorf("original's replayed prompts %q: want its own two, nothing of the fork", o.User)
	}
	f := normalise(b.load(t, fork))
	if f.User != "original questionfork question" {
		t.Errorf("fork's replayed prompts %q: want the original's history, then its own", f.User)
	}
	if f.Agent != "original answersecond answer" {
		t.Errorf("fork's replayed answers %q", f.Agent)
	}
	listed, _ := b.listAll(t, st.workspace)
	if got := ids(listed); !slices.Contains(got, orig) || !slices.Contains(got, fork) {
		t.Errorf("list %v lacks the original or the fork", got)
	}
}

func TestTwoProcessesShareOneStore(t *testing.T) {
	st := newSharedHome(t, scriptFile(t, "slow-shared"))
	a := st.start(t, testkit.Minimal())
	b := st.start(t, testkit.Minimal())

	// Both create sessions at the same time.
	var pa, pb []*testkit.Pending
	for range 10 {
		pa = append(pa, a.CallAsync("session/new", map[string]any{"cwd": st.workspace, "mcpServers": []any{}}))
		pb = append(pb, b.CallAsync("session/new", map[string]any{"cwd": st.workspace, "mcpServers": []any{}}))
	}
	var created []string
	for _, p := range append(pa, pb...) {
		res, rerr := p.Wait(a.ctx)
		if rerr != nil {
			t.Fatalf("concurrent session/new: %v", rerr)
		}
		var r struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(res, &r)
		created = append(created, r.SessionID)
	}
	slices.Sort(created)
	for name, s := range map[string]*session{"A": a, "B": b} {
		listed, _ := s.listAll(t, "")
		got := ids(listed)
		slices.Sort(got)
		if !slices.Equal(got, created) {
			t.Errorf("process %s lists %d sessions, want the 20 both created", name, len(got))
		}
	}

	// The same session prompted from both processes at once: the second is
	// refused while the first runs, and says why.
	sid := created[0]
	a.load(t, sid)
	b.load(t, sid)
	pA := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "from A"))
	if _, err := a.WaitUpdate(a.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
		t.Fatal(err)
	}
	before := len(b.Updates(sid))
	_, rerr := b.Prompt(b.ctx, sid, "from B")
	if rerr == nil {
		t.Fatal("a prompt from a second process ran while the first process was running a turn of the same session")
	}
	if got := testkit.History(b.Updates(sid)[before:]); len(got) != 0 {
		t.Errorf("the refused prompt streamed %v", updateKinds(got))
	}
	t.Run("the refusal explains the cross-process lease", func(t *testing.T) {
		msg := strings.ToLower(rerr.Message + " " + string(rerr.Data))
		if !strings.Contains(msg, "another corvid process") {
			t.Errorf("refusal %v does not say another corvid process holds the session", rerr)
		}
	})
	a.Cancel(sid)
	if res, rerr := pA.Wait(a.ctx); rerr != nil || !strings.Contains(string(res), "cancelled") {
		t.Errorf("A's prompt: %s %v", res, rerr)
	}
	// A's turn is over, so B may run one now.
	bp := b.CallAsync("session/prompt", testkit.TextPrompt(sid, "from B again"))
	if _, err := b.WaitUpdate(b.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
		t.Fatalf("B could not run a turn after A's ended: %v", err)
	}
	b.Cancel(sid)
	if _, rerr := bp.Wait(b.ctx); rerr != nil {
		t.Errorf("B's prompt: %v", rerr)
	}
	// A's turn streamed only A's answer: nothing of B's refused prompt.
	for _, u := range a.Updates(sid) {
		if strings.Contains(string(u.Raw), "from B") {
			t.Errorf("process A streamed B's prompt: %s", u.Raw)
		}
	}
}

func TestCorruptStoreFailsSessionNewClearlyAndTheProcessStaysUp(t *testing.T) {
	st := newSharedHome(t, text("x", 0))
	if err := os.MkdirAll(st.home, 0o700); err != nil {
		t.Fatal(err)
	}
	garbage := bytes.Repeat([]byte("this is not a sqlite database\x00\xff"), 300)
	if err := os.WriteFile(st.dbPath(), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	s := st.start(t, testkit.Minimal())
	_, rerr := s.Call(s.ctx, "session/new", map[string]any{"cwd": st.workspace, "mcpServers": []any{}})
	if rerr == nil {
		t.Fatal("session/new succeeded on a corrupt store")
	}
	t.Run("the error names the file", func(t *testing.T) {
		if msg := rerr.Message + " " + string(rerr.Data); !strings.Contains(msg, st.dbPath()) {
			t.Errorf("session/new error %v does not name %s", rerr, st.dbPath())
		}
	})
	// Still serving: another request is answered, not met with EOF.
	if _, rerr := s.Call(s.ctx, "session/list", map[string]any{}); rerr != nil && rerr.Code == testkit.CodeNoResponse {
		t.Fatal("corvid stopped answering after the store failed")
	}
	select {
	case <-s.Exited():
		t.Fatalf("corvid exited (code %d) after the store failed", s.ExitCode())
	default:
	}
	if b, err := os.ReadFile(st.dbPath()); err != nil || !bytes.Equal(b, garbage) {
		t.Error("corvid changed the corrupt file instead of leaving it for the user")
	}
}

func TestMissingStoreIsCreated(t *testing.T) {
	st := newSharedHome(t, text("fresh", 0))
	if _, err := os.Stat(st.home); !os.IsNotExist(err) {
		t.Fatalf("CORVID_HOME %s exists before the test: %v", st.home, err)
	}
	s := st.start(t, testkit.Minimal())
	sid := s.NewSession(s.ctx, st.workspace)
	s.turn(t, sid, "hello", "end_turn")
	if _, err := os.Stat(st.dbPath()); err != nil {
		t.Fatalf("no session database after session/new: %v", err)
	}
	s.Close()
	b := st.start(t, testkit.Minimal())
	if txt := testkit.TextOf(b.load(t, sid), "agent_message_chunk"); txt != "fresh" {
		t.Errorf("replay from the new store %q", txt)
	}
}
