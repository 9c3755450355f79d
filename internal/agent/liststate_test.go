package agent

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/store/pgdriver"
	"github.com/corvid-agent/corvid/internal/testkit/pgtest"
)

func usd(v float64) *float64 { return &v }

// rawRow is a stored row given as its kind and JSON payload.
type rawRow struct{ kind, payload string }

// appendRows stores items (as rowsOf encodes them, plus turn_error rows
// given as turnErrorRecord and rawRows as they are) in session id.
func appendRows(t testing.TB, st *store.Store, id string, items ...any) {
	t.Helper()
	for _, it := range items {
		if r, ok := it.(rawRow); ok {
			if err := st.Append(id, r.kind, []byte(r.payload)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if te, ok := it.(turnErrorRecord); ok {
			b, _ := json.Marshal(te)
			if err := st.Append(id, recordTurnError, b); err != nil {
				t.Fatal(err)
			}
			continue
		}
		r := rowsOf(t, it)[0]
		if err := st.Append(id, r.Kind, r.Payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// finishedTurn is one prompt answered, with the session's cost after it.
func finishedTurn(n int, cost float64) []any {
	return []any{
		chunk(EventUserChunk, fmt.Sprintf("u%d", n), "prompt"),
		llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("prompt")}},
		chunk(EventMessageChunk, fmt.Sprintf("a%d", n), "answer"),
		Event{Kind: EventUsage, Usage: &Usage{Used: 10, Size: 100, CostUSD: usd(cost)}},
		llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("answer")}},
	}
}

func TestListStateSaysWhetherTheLastTurnEndedAndTheCost(t *testing.T) {
	user := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("go")}}
	toolUse := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartToolUse, ToolUseID: "c1", ToolName: "shell",
		Input: json.RawMessage(`{"role":"user"}`)}}}
	// A detached worker's running call, as rows of this release and of
	// the typed rows (schema 3) tag it.
	workerMeta := rawRow{string(EventToolCall), `{"kind":"tool_call","toolCall":{"id":"w1","status":"in_progress"},"meta":{"corvid.dev/subagent":{"id":"w","background":true}}}`}
	workerTag := rawRow{string(EventToolCall), `{"kind":"tool_call","toolCall":{"id":"w2","status":"in_progress"},"member":{"id":"w","name":"w","parentToolCallId":"c0","depth":1,"background":true}}`}
	cases := []struct {
		name        string
		rows        []any
		interrupted bool
		cost        *float64
	}{
		{"nothing stored", nil, false, nil},
		{"a finished turn", finishedTurn(1, 0.25), false, usd(0.25)},
		{"killed before the answer", append(finishedTurn(1, 0.25), chunk(EventUserChunk, "u2", "again"), user), true, usd(0.25)},
		{"killed mid-answer", append(finishedTurn(1, 0.25), chunk(EventUserChunk, "u2", "again"), user,
			chunk(EventMessageChunk, "a2", "half an ans")), true, usd(0.25)},
		{"killed in a tool call", append(finishedTurn(1, 0.25), chunk(EventUserChunk, "u2", "again"), user, toolUse,
			Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: "c1", Status: ToolPending}},
			Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "c1", Status: ToolInProgress}}), true, usd(0.25)},
		{"a tool call that finished", append(finishedTurn(1, 0.25), chunk(EventUserChunk, "u2", "again"), user, toolUse,
			Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: "c1", Status: ToolPending}},
			Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "c1", Status: ToolCompleted}},
			llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartToolResult, ToolUseID: "c1", Text: "ok"}}},
			chunk(EventMessageChunk, "a2", "done"), Event{Kind: EventUsage, Usage: &Usage{CostUSD: usd(0.5)}},
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("done")}}), false, usd(0.5)},
		{"the drain's note", append(finishedTurn(1, 0.25), chunk(EventUserChunk, "u2", "again"), user,
			chunk(EventMessageChunk, "a2", "half"),
			chunk(EventMessageChunk, "n2", "\n\n"+InterruptedTurnNote+": corvid serve stopped before it finished."),
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("half")}}), true, usd(0.25)},
		{"the note quoted in an answer", append(finishedTurn(1, 0.25), chunk(EventUserChunk, "u2", "again"), user,
			chunk(EventMessageChunk, "a2", "it said "+InterruptedTurnNote),
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("it said")}}), false, usd(0.25)},
		{"an interrupted turn, then one that ended", append(append(finishedTurn(1, 0.25), chunk(EventUserChunk, "u2", "again"), user),
			finishedTurn(3, 0.75)...), false, usd(0.75)},
		{"a turn that failed", append(finishedTurn(1, 0.25), chunk(EventUserChunk, "u2", "again"), user,
			turnErrorRecord{Message: "the model failed"}), false, usd(0.25)},
		{"a worker still running after the turn", append(finishedTurn(1, 0.25), workerMeta, workerTag), false, usd(0.25)},
		{"a turn's own call still running", append(finishedTurn(1, 0.25),
			rawRow{string(EventToolCall), `{"kind":"tool_call","toolCall":{"id":"w3","status":"in_progress"},"member":{"id":"m","name":"m","parentToolCallId":"c0","depth":1}}`}), true, usd(0.25)},
		{"a refused prompt, reset away", append(finishedTurn(1, 0.25), chunk(EventUserChunk, "u2", "bad"), user,
			[]llm.Message{user, {Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("answer")}}}), false, usd(0.25)},
	}
	check := func(t *testing.T, target func(t *testing.T) string) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				st := storeWithSession(t, target(t))
				appendRows(t, st, "s1", c.rows...)
				ls, err := scanListState(t.Context(), st, "s1")
				if err != nil {
					t.Fatal(err)
				}
				if ls.Interrupted != c.interrupted {
					t.Errorf("interrupted = %v, want %v", ls.Interrupted, c.interrupted)
				}
				if (ls.CostUSD == nil) != (c.cost == nil) || (c.cost != nil && *ls.CostUSD != *c.cost) {
					t.Errorf("cost = %v, want %v", ls.CostUSD, c.cost)
				}
			})
		}
	}
	// Both store backends: the read goes through Store.ScanEvents.
	t.Run("sqlite", func(t *testing.T) { check(t, func(*testing.T) string { return "" }) })
	t.Run("postgres", func(t *testing.T) {
		pgtest.Skip(t)
		store.RegisterPostgres(pgdriver.Driver{}) // as the corvid-pg binary does
		srv, err := pgtest.Start()
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Stop()
		check(t, func(t *testing.T) string {
			url, err := srv.NewDB()
			if err != nil {
				t.Fatal(err)
			}
			return url
		})
	})
}

// listStore is a store at path with n sessions of turns finished turns
// each, the last one interrupted.
func listStore(tb testing.TB, path string, n, turns int) {
	st, err := store.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	for i := range n {
		id := fmt.Sprintf("s%03d", i)
		if err := st.CreateSession(tb.Context(), store.Session{ID: id, Cwd: "/w"}); err != nil {
			tb.Fatal(err)
		}
		var rows []any
		for j := range turns {
			rows = append(rows, finishedTurn(j, float64(j))...)
		}
		rows = append(rows, chunk(EventUserChunk, "last", "again"), llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("again")}})
		appendRows(tb, st, id, rows...)
	}
}

func TestAgentListStateCachesUntilTheSessionChanges(t *testing.T) {
	path := t.TempDir() + "/s.db"
	listStore(t, path, 1, 1)
	a := New(Config{StorePath: path})
	defer a.Close()
	list, _, err := a.ListSessions(t.Context(), "", "")
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	ls, err := a.ListState(t.Context(), list[0].ID, list[0].UpdatedAt)
	if err != nil || !ls.Interrupted {
		t.Fatalf("%+v %v, want interrupted", ls, err)
	}
	st, _ := a.openStore()
	time.Sleep(time.Millisecond) // a later updated_at
	appendRows(t, st, list[0].ID, chunk(EventMessageChunk, "a9", "answer"), Event{Kind: EventUsage, Usage: &Usage{CostUSD: usd(2)}},
		llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("answer")}})
	if ls, _ := a.ListState(t.Context(), list[0].ID, list[0].UpdatedAt); !ls.Interrupted {
		t.Errorf("same updated_at: %+v, want the cached answer", ls)
	}
	list, _, _ = a.ListSessions(t.Context(), "", "")
	ls, err = a.ListState(t.Context(), list[0].ID, list[0].UpdatedAt)
	if err != nil || ls.Interrupted || ls.CostUSD == nil || *ls.CostUSD != 2 {
		t.Errorf("after the session changed: %+v %v, want ended, cost 2", ls, err)
	}
}

// BenchmarkListSessions100 lists 100 stored sessions of 20 turns each
// (two pages), and cold-long of 200 turns each:
// rows is what session/list read before ListState (the rows alone), cold
// reads every session's state from its log, cached what a list repeated
// with nothing changed costs.
func BenchmarkListSessions100(b *testing.B) {
	path := b.TempDir() + "/s.db"
	listStore(b, path, 100, 20)
	long := b.TempDir() + "/long.db"
	listStore(b, long, 100, 200)
	run := func(b *testing.B, state, fresh bool) {
		a := New(Config{StorePath: path})
		defer a.Close()
		list := func() {
			var list []SessionInfo
			for cursor := ""; ; {
				page, next, err := a.ListSessions(b.Context(), "", cursor)
				if err != nil {
					b.Fatal(err)
				}
				list = append(list, page...)
				if cursor = next; next == "" {
					break
				}
			}
			if len(list) != 100 {
				b.Fatal(len(list))
			}
			for _, si := range list {
				if !state {
					continue
				}
				if ls, err := a.ListState(b.Context(), si.ID, si.UpdatedAt); err != nil || !ls.Interrupted {
					b.Fatal(ls, err)
				}
			}
		}
		list() // the store opened, and for cached the states read
		for b.Loop() {
			if fresh {
				a.listStates.Clear()
			}
			list()
		}
	}
	b.Run("rows", func(b *testing.B) { run(b, false, false) })
	b.Run("cold", func(b *testing.B) { run(b, true, true) })
	b.Run("cached", func(b *testing.B) { run(b, true, false) })
	path = long // 200 turns (about 1,000 rows) each
	b.Run("cold-long", func(b *testing.B) { run(b, true, true) })
}
