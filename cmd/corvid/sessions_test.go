package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/tool"
)

// sessionsFixture is a temp CORVID_HOME with a store filled the way the
// agent fills it: display events as agent.Event JSON, plus model-context
// records.
type sessionsFixture struct {
	env config.MapEnv
	st  *store.Store
}

func newSessionsFixture(t *testing.T) *sessionsFixture {
	t.Helper()
	env := config.MapEnv{"CORVID_HOME": t.TempDir()}
	st, err := store.Open(sessionsDBPath(env))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &sessionsFixture{env: env, st: st}
}

func (f *sessionsFixture) create(t *testing.T, id, cwd, title string) {
	t.Helper()
	if err := f.st.CreateSession(context.Background(), store.Session{ID: id, Cwd: cwd, Title: title, Model: "script:demo"}); err != nil {
		t.Fatal(err)
	}
}

func (f *sessionsFixture) event(t *testing.T, id string, ev agent.Event) {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	f.raw(t, id, string(ev.Kind), b)
}

func (f *sessionsFixture) raw(t *testing.T, id, kind string, payload []byte) {
	t.Helper()
	if err := f.st.Append(id, kind, payload); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func chunk(kind agent.EventKind, msgID, text string) agent.Event {
	return agent.Event{Kind: kind, MessageID: msgID, Content: &agent.Block{Type: agent.BlockText, Text: text}}
}

// fillRichSession records one turn with a prompt, thinking, a finished read,
// a plan, an edit, an interrupted shell call and an answer in chunks.
func (f *sessionsFixture) fillRichSession(t *testing.T, id, cwd string) {
	t.Helper()
	f.create(t, id, cwd, "Tidy the notes")
	f.event(t, id, chunk(agent.EventUserChunk, "user_1", "Tidy notes.txt please."))
	f.raw(t, id, "context", []byte(`{"role":"user","parts":[{"type":"text","text":"CONTEXT-ONLY user message"}]}`))
	f.event(t, id, chunk(agent.EventThoughtChunk, "th_1", "Read it "))
	f.event(t, id, chunk(agent.EventThoughtChunk, "th_1", "first."))
	f.event(t, id, agent.Event{Kind: agent.EventToolCall, ToolCall: &agent.ToolCall{ID: "call_read", Name: "read", Title: "Read notes.txt", Kind: tool.KindRead, Status: agent.ToolPending}})
	f.event(t, id, agent.Event{Kind: agent.EventToolCallState, ToolCall: &agent.ToolCall{ID: "call_read", Status: agent.ToolInProgress}})
	f.event(t, id, agent.Event{Kind: agent.EventPlan, Plan: []tool.PlanEntry{
		{Content: "Read the notes", Status: "completed", Priority: "high"},
		{Content: "Sort the lines", Status: "in_progress", Priority: "medium"},
		{Content: "Report back", Status: "pending", Priority: "low"},
	}})
	f.event(t, id, agent.Event{Kind: agent.EventToolCallState, ToolCall: &agent.ToolCall{ID: "call_read", Status: agent.ToolCompleted,
		Content: []tool.Content{{Type: tool.ContentText, Text: "```\nzeta\nalpha\n```"}}}})
	old := "keep\nzeta\nalpha\ntail\n"
	f.event(t, id, agent.Event{Kind: agent.EventToolCall, ToolCall: &agent.ToolCall{ID: "call_edit", Name: "edit", Title: "Edit notes.txt", Kind: tool.KindEdit, Status: agent.ToolCompleted,
		Content: []tool.Content{{Type: tool.ContentDiff, Path: filepath.Join(cwd, "notes.txt"), OldText: &old, NewText: "keep\nalpha\nzeta\ntail\n"}}}})
	f.event(t, id, agent.Event{Kind: agent.EventToolCall, ToolCall: &agent.ToolCall{ID: "call_sh", Name: "shell", Title: "Run `sleep 100`", Kind: tool.KindExecute, Status: agent.ToolPending}})
	f.event(t, id, agent.Event{Kind: agent.EventToolCallState, ToolCall: &agent.ToolCall{ID: "call_sh", Status: agent.ToolInProgress}})
	f.event(t, id, chunk(agent.EventMessageChunk, "msg_1", "Sorted "))
	f.event(t, id, chunk(agent.EventMessageChunk, "msg_1", "the notes."))
	f.event(t, id, agent.Event{Kind: agent.EventUsage, Usage: &agent.Usage{Used: 10, Size: 100}})
}

func runSessions(t *testing.T, fn func(w *bytes.Buffer) error) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := fn(&out)
	return out.String(), err
}

func TestSessionsListPrintsEverySessionNewestFirstAndFiltersByCwd(t *testing.T) {
	f := newSessionsFixture(t)
	a, b := t.TempDir(), t.TempDir()
	f.create(t, "sess_old", a, "Old work")
	f.event(t, "sess_old", chunk(agent.EventUserChunk, "u", "old"))
	f.create(t, "sess_mid", b, "")
	f.event(t, "sess_mid", chunk(agent.EventUserChunk, "u", "mid"))
	f.create(t, "sess_new", a, "New work\nwith a second line")
	f.event(t, "sess_new", chunk(agent.EventUserChunk, "u", "new"))

	table, err := runSessions(t, func(w *bytes.Buffer) error { return runSessionsList(f.env, sessionsListCmd{}, w) })
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "UPDATED") || !strings.Contains(lines[0], "TITLE") || !strings.Contains(lines[0], "CWD") {
		t.Fatalf("table:\n%s", table)
	}
	for i, want := range []string{"sess_new", "sess_mid", "sess_old"} {
		if !strings.HasPrefix(lines[i+1], want) {
			t.Errorf("row %d is %q, want %s (newest first)", i+1, lines[i+1], want)
		}
	}
	if !strings.Contains(lines[1], "New work with a second line") || !strings.Contains(lines[1], a) {
		t.Errorf("row for sess_new %q lacks its one-line title or cwd", lines[1])
	}
	if !strings.Contains(lines[2], "(untitled)") {
		t.Errorf("row for an untitled session %q", lines[2])
	}

	js, err := runSessions(t, func(w *bytes.Buffer) error { return runSessionsList(f.env, sessionsListCmd{Cwd: a, JSON: true}, w) })
	if err != nil {
		t.Fatal(err)
	}
	var got []sessionJSON
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("--json output %q: %v", js, err)
	}
	if len(got) != 2 || got[0].ID != "sess_new" || got[1].ID != "sess_old" || got[0].Cwd != a || got[0].UpdatedAt == "" || got[1].Title != "Old work" {
		t.Errorf("--cwd %s --json: %+v", a, got)
	}

	// A directory with no sessions says so, rather than "none stored yet".
	none, err := runSessions(t, func(w *bytes.Buffer) error {
		return runSessionsList(f.env, sessionsListCmd{Cwd: "/nonexistent"}, w)
	})
	if err != nil || strings.TrimSpace(none) != "No sessions for /nonexistent." {
		t.Errorf("--cwd /nonexistent: %q %v", none, err)
	}

	// A relative --cwd is taken from the working directory.
	t.Chdir(b)
	rel, err := runSessions(t, func(w *bytes.Buffer) error { return runSessionsList(f.env, sessionsListCmd{Cwd: ".", JSON: true}, w) })
	if err != nil || !strings.Contains(rel, "sess_mid") || strings.Contains(rel, "sess_old") {
		t.Errorf("--cwd . in %s: %s %v", b, rel, err)
	}
}

func TestSessionsListWithoutAStoreCreatesNothing(t *testing.T) {
	env := config.MapEnv{"CORVID_HOME": filepath.Join(t.TempDir(), "home")}
	out, err := runSessions(t, func(w *bytes.Buffer) error { return runSessionsList(env, sessionsListCmd{}, w) })
	if err != nil || !strings.Contains(out, "No sessions") {
		t.Errorf("list without a store: %q %v", out, err)
	}
	out, err = runSessions(t, func(w *bytes.Buffer) error { return runSessionsList(env, sessionsListCmd{JSON: true}, w) })
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("list --json without a store: %q %v, want []", out, err)
	}
	if _, err := runSessions(t, func(w *bytes.Buffer) error { return runSessionsShow(env, sessionsShowCmd{ID: "sess_x"}, w) }); err == nil {
		t.Error("show without a store succeeded")
	}
	if _, err := os.Stat(sessionsDBPath(env)); !os.IsNotExist(err) {
		t.Errorf("a read-only command created the store: %v", err)
	}
}

func TestSessionsShowPrintsAReadableTranscript(t *testing.T) {
	f := newSessionsFixture(t)
	cwd := t.TempDir()
	f.fillRichSession(t, "sess_rich_1", cwd)
	out, err := runSessions(t, func(w *bytes.Buffer) error { return runSessionsShow(f.env, sessionsShowCmd{ID: "sess_rich_1"}, w) })
	if err != nil {
		t.Fatal(err)
	}
	wants := []string{
		"Session sess_rich_1: Tidy the notes",
		"You:\n  Tidy notes.txt please.",
		"Thinking:\n  Read it first.",
		"Tool read: Read notes.txt [completed]",
		"    zeta",
		"Plan:\n  [x] Read the notes\n  [~] Sort the lines\n  [ ] Report back",
		"Tool edit: Edit notes.txt [completed]",
		"changed " + filepath.Join(cwd, "notes.txt"),
		"Tool shell: Run `sleep 100` [interrupted]",
		"Agent:\n  Sorted the notes.",
	}
	last := -1
	for _, w := range wants {
		i := strings.Index(out, w)
		if i < 0 {
			t.Errorf("transcript lacks %q:\n%s", w, out)
			continue
		}
		if i < last {
			t.Errorf("%q is out of order:\n%s", w, out)
		}
		last = i
	}
	if strings.Contains(out, "CONTEXT-ONLY") {
		t.Errorf("the transcript shows a model-context record:\n%s", out)
	}
}

func TestSessionsFindsAnIDByUniquePrefix(t *testing.T) {
	f := newSessionsFixture(t)
	f.create(t, "sess_abc1", "/w", "one")
	f.create(t, "sess_abc2", "/w", "two")
	f.create(t, "sess_xyz", "/w", "three")
	out, err := runSessions(t, func(w *bytes.Buffer) error { return runSessionsShow(f.env, sessionsShowCmd{ID: "sess_x"}, w) })
	if err != nil || !strings.Contains(out, "sess_xyz: three") {
		t.Errorf("show by unique prefix: %q %v", out, err)
	}
	_, err = runSessions(t, func(w *bytes.Buffer) error { return runSessionsShow(f.env, sessionsShowCmd{ID: "sess_abc"}, w) })
	if err == nil || !strings.Contains(err.Error(), "sess_abc1") || !strings.Contains(err.Error(), "sess_abc2") {
		t.Errorf("ambiguous prefix: %v, want an error naming both sessions", err)
	}
	// Like a short git hash, the prefix may leave out "sess_".
	out, err = runSessions(t, func(w *bytes.Buffer) error { return runSessionsShow(f.env, sessionsShowCmd{ID: "xy"}, w) })
	if err != nil || !strings.Contains(out, "sess_xyz: three") {
		t.Errorf("show by a prefix without sess_: %q %v", out, err)
	}
	_, err = runSessions(t, func(w *bytes.Buffer) error { return runSessionsShow(f.env, sessionsShowCmd{ID: "abc"}, w) })
	if err == nil || !strings.Contains(err.Error(), "sess_abc1") {
		t.Errorf("ambiguous bare prefix: %v", err)
	}
	_, err = runSessions(t, func(w *bytes.Buffer) error { return runSessionsShow(f.env, sessionsShowCmd{ID: "nope"}, w) })
	if err == nil || !strings.Contains(err.Error(), "corvid sessions list") {
		t.Errorf("unknown id: %v", err)
	}
}

func TestSessionsExportMarkdown(t *testing.T) {
	f := newSessionsFixture(t)
	cwd := t.TempDir()
	f.fillRichSession(t, "sess_md", cwd)
	out, err := runSessions(t, func(w *bytes.Buffer) error {
		return runSessionsExport(f.env, sessionsExportCmd{ID: "sess_md", Format: "markdown"}, w)
	})
	if err != nil {
		t.Fatal(err)
	}
	wants := []string{
		"# Tidy the notes\n",
		"- Session: `sess_md`",
		"- Directory: `" + cwd + "`",
		"- Model: `script:demo`",
		"## User\n\nTidy notes.txt please.\n",
		"<details><summary>Thinking</summary>\n\nRead it first.\n\n</details>",
		"### Tool `read`: Read notes.txt (completed)\n\n```\nzeta\nalpha\n```",
		"### Plan\n\n- [x] Read the notes (completed)\n- [~] Sort the lines (in_progress)\n- [ ] Report back (pending)",
		"```diff\n@@ -2,2 +2,2 @@\n-zeta\n-alpha\n+alpha\n+zeta\n```",
		"### Tool `shell`: Run `sleep 100` (interrupted)",
		"## Agent\n\nSorted the notes.\n",
	}
	last := -1
	for _, w := range wants {
		i := strings.Index(out, w)
		if i < 0 {
			t.Errorf("markdown lacks %q:\n%s", w, out)
			continue
		}
		if i < last {
			t.Errorf("%q is out of order", w)
		}
		last = i
	}
	if strings.Contains(out, "CONTEXT-ONLY") {
		t.Error("the markdown shows a model-context record")
	}
}

func TestSessionsExportJSONLIsEveryStoredEvent(t *testing.T) {
	f := newSessionsFixture(t)
	f.fillRichSession(t, "sess_jl", t.TempDir())
	evs, err := f.st.Events(context.Background(), "sess_jl")
	if err != nil {
		t.Fatal(err)
	}
	out, err := runSessions(t, func(w *bytes.Buffer) error {
		return runSessionsExport(f.env, sessionsExportCmd{ID: "sess_jl", Format: "jsonl"}, w)
	})
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	var lines []map[string]json.RawMessage
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != len(evs)+1 {
		t.Fatalf("%d lines for %d events, want a header and one per event", len(lines), len(evs))
	}
	if string(lines[0]["kind"]) != `"session"` || !bytes.Contains(lines[0]["session"], []byte(`"id":"sess_jl"`)) {
		t.Errorf("header line %v", lines[0])
	}
	for i, ev := range evs {
		l := lines[i+1]
		var kind string
		var seq int64
		_ = json.Unmarshal(l["kind"], &kind)
		_ = json.Unmarshal(l["seq"], &seq)
		if kind != ev.Kind || seq != ev.Seq || l["time"] == nil {
			t.Errorf("line %d: kind %q seq %d, want %q %d", i+1, kind, seq, ev.Kind, ev.Seq)
		}
		var back agent.Event
		if kind != "context" {
			if err := json.Unmarshal(l["payload"], &back); err != nil || string(back.Kind) != kind {
				t.Errorf("line %d payload does not decode as the agent event: %s", i+1, l["payload"])
			}
		}
	}
	if !strings.Contains(out, "CONTEXT-ONLY") {
		t.Error("the JSONL export drops the model-context records")
	}
}

func TestSessionsRmDeletesUnlessATurnIsRunning(t *testing.T) {
	f := newSessionsFixture(t)
	f.fillRichSession(t, "sess_gone", "/w")
	f.create(t, "sess_busy", "/w", "busy one")

	// Another Store (as another corvid process would) runs a turn of sess_busy.
	other, err := store.Open(sessionsDBPath(f.env))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	release, err := other.Acquire(context.Background(), "sess_busy", "corvid acp")
	if err != nil {
		t.Fatal(err)
	}
	_, err = runSessions(t, func(w *bytes.Buffer) error { return runSessionsRm(f.env, sessionsRmCmd{ID: "sess_busy"}, w) })
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("rm of a session with a running turn: %v, want a refusal", err)
	}
	release()
	if _, err := f.st.GetSession(context.Background(), "sess_busy"); err != nil {
		t.Errorf("the refused rm deleted the session: %v", err)
	}

	out, err := runSessions(t, func(w *bytes.Buffer) error { return runSessionsRm(f.env, sessionsRmCmd{ID: "sess_gone"}, w) })
	if err != nil || !strings.Contains(out, "Deleted session sess_gone") {
		t.Errorf("rm: %q %v", out, err)
	}
	if _, err := f.st.GetSession(context.Background(), "sess_gone"); err == nil {
		t.Error("the session is still stored after rm")
	}
	if _, err := runSessions(t, func(w *bytes.Buffer) error { return runSessionsRm(f.env, sessionsRmCmd{ID: "sess_gone"}, w) }); err == nil {
		t.Error("rm of a missing session succeeded silently")
	}
	if _, err := runSessions(t, func(w *bytes.Buffer) error { return runSessionsRm(f.env, sessionsRmCmd{ID: "sess_busy"}, w) }); err != nil {
		t.Errorf("rm after the turn ended: %v", err)
	}
}

func TestSessionsCommandLine(t *testing.T) {
	var cli struct {
		Sessions sessionsCmd `cmd:""`
	}
	parser, err := kong.New(&cli, kong.Name("corvid"), kong.Exit(func(int) { t.Fatal("kong exited") }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse([]string{"sessions", "list", "--cwd", "/src", "--json"}); err != nil {
		t.Fatal(err)
	}
	if cli.Sessions.List.Cwd != "/src" || !cli.Sessions.List.JSON {
		t.Errorf("list flags %+v", cli.Sessions.List)
	}
	if _, err := parser.Parse([]string{"sessions", "export", "sess_1"}); err != nil || cli.Sessions.Export.Format != "markdown" || cli.Sessions.Export.ID != "sess_1" {
		t.Errorf("export default format: %+v %v", cli.Sessions.Export, err)
	}
	if _, err := parser.Parse([]string{"sessions", "export", "sess_1", "--format", "jsonl"}); err != nil || cli.Sessions.Export.Format != "jsonl" {
		t.Errorf("export --format jsonl: %+v %v", cli.Sessions.Export, err)
	}
	if _, err := parser.Parse([]string{"sessions", "export", "sess_1", "--format", "html"}); err == nil {
		t.Error("export --format html was accepted")
	}
	for _, args := range [][]string{{"sessions", "show"}, {"sessions", "rm"}} {
		if _, err := parser.Parse(args); err == nil {
			t.Errorf("%v without an id was accepted", args)
		}
	}
	// Every command, flag and argument explains itself in --help.
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		if n.Type == kong.CommandNode && n.Help == "" {
			t.Errorf("command %s has no help", n.Path())
		}
		for _, fl := range n.Flags {
			if fl.Help == "" {
				t.Errorf("flag --%s of %s has no help", fl.Name, n.Path())
			}
		}
		for _, p := range n.Positional {
			if p.Help == "" {
				t.Errorf("argument %s of %s has no help", p.Name, n.Path())
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, c := range parser.Model.Children {
		if c.Name == "sessions" {
			for _, sub := range c.Children {
				walk(sub)
			}
		}
	}
}
