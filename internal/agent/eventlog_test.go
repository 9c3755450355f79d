package agent

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/tool"
)

// storeWithSession opens a store in a file of its own at path (a new temp
// file when path is "") holding one session, s1; the test closes it.
func storeWithSession(t *testing.T, path string) *store.Store {
	t.Helper()
	if path == "" {
		path = t.TempDir() + "/s.db"
	}
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateSession(t.Context(), store.Session{ID: "s1", Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	return st
}

// rowsOf encodes values as stored rows, the way eventLog writes them.
func rowsOf(t testing.TB, items ...any) []store.Event {
	t.Helper()
	var rows []store.Event
	for i, it := range items {
		kind := ""
		switch v := it.(type) {
		case Event:
			kind = string(v.Kind)
		case llm.Message:
			kind = recordContext
		case []llm.Message:
			kind = recordContextReset
		default:
			t.Fatalf("rowsOf: %T", it)
		}
		b, err := json.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, store.Event{Seq: int64(i + 1), Kind: kind, Payload: b})
	}
	return rows
}

func chunk(kind EventKind, id, text string) Event {
	return Event{Kind: kind, MessageID: id, Content: &Block{Type: BlockText, Text: text}}
}

func TestFoldMergesTheChunksOfOneMessageOnly(t *testing.T) {
	lg := Fold(rowsOf(t,
		chunk(EventUserChunk, "u1", "hel"), chunk(EventUserChunk, "u1", "lo"),
		chunk(EventThoughtChunk, "t1", "hm"), chunk(EventMessageChunk, "m1", "a"), chunk(EventMessageChunk, "m1", "b"),
		chunk(EventMessageChunk, "m2", "c"), // another message: not merged
		Event{Kind: EventMessageChunk, MessageID: "m2", Content: &Block{Type: BlockImage, MimeType: "image/png", Data: []byte{1}}},
		chunk(EventMessageChunk, "m2", "d"), // after an image: a new entry
	))
	var got []string
	for _, e := range lg.Entries() {
		got = append(got, fmt.Sprintf("%s/%s/%s:%s", e.Kind, e.MessageID, e.Content.Type, e.Content.Text))
	}
	want := []string{
		"user_message_chunk/u1/text:hello", "agent_thought_chunk/t1/text:hm", "agent_message_chunk/m1/text:ab",
		"agent_message_chunk/m2/text:c", "agent_message_chunk/m2/image:", "agent_message_chunk/m2/text:d",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if lg.Turns != 1 || lg.LastSeq != 8 {
		t.Errorf("turns %d, last seq %d; want 1, 8", lg.Turns, lg.LastSeq)
	}
}

func TestFoldGivesEachToolCallItsFinalStateAndMarksUnfinishedOnesInterrupted(t *testing.T) {
	lg := Fold(rowsOf(t,
		Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: "c1", Name: "read", Title: "Read a", Status: ToolPending}},
		Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "c1", Status: ToolInProgress}},
		Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: "c2", Name: "shell", Title: "Run", Status: ToolPending}},
		Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "c1", Status: ToolCompleted, Content: []tool.Content{textContent("ok")}}},
		Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "c2", Status: ToolInProgress, Title: "Run ls"}},
		Event{Kind: EventUsage, Usage: &Usage{Used: 10, Size: 100}},
		Event{Kind: EventUsage, Usage: &Usage{Used: 20, Size: 100}},
	))
	if len(lg.Entries()) != 2 {
		t.Fatalf("%d entries, want 2", len(lg.Entries()))
	}
	c1, c2 := lg.Entries()[0], lg.Entries()[1]
	if c1.ToolCall.Status != ToolPending || c1.Final.Status != ToolCompleted || c1.Interrupted || c1.Final.Content[0].Text != "ok" {
		t.Errorf("c1 = %+v final %+v", c1.ToolCall, c1.Final)
	}
	if !c2.Interrupted || c2.Final.Title != "Run ls" {
		t.Errorf("c2 = %+v final %+v interrupted %v", c2.ToolCall, c2.Final, c2.Interrupted)
	}
	replay := lg.Replay()
	kinds := []EventKind{EventToolCall, EventToolCallState, EventToolCall, EventToolCallState, EventUsage}
	if len(replay) != len(kinds) {
		t.Fatalf("replay has %d events, want %d", len(replay), len(kinds))
	}
	for i, k := range kinds {
		if replay[i].Kind != k {
			t.Errorf("replay[%d] = %s, want %s", i, replay[i].Kind, k)
		}
	}
	if f := replay[3].ToolCall; f.Status != ToolFailed || f.Content[len(f.Content)-1].Text != interruptedNote {
		t.Errorf("interrupted call replays as %+v", f)
	}
	if replay[4].Usage.Used != 20 || lg.Entries()[1].Final.Status != ToolInProgress {
		t.Errorf("usage %+v; Replay must not change the log (final %+v)", replay[4].Usage, lg.Entries()[1].Final)
	}
	if strings.Join(lg.ToolIDs, ",") != "c1,c2" {
		t.Errorf("tool ids %v", lg.ToolIDs)
	}
}

func TestFoldRestoresTheModelContextAndKeepsAnAnswerCutShort(t *testing.T) {
	user := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("q1")}}
	asked := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartToolUse, ToolUseID: "t1", ToolName: "read", Input: json.RawMessage(`{}`)}}}
	// A reset replaces what came before; a tool use cut off gets a result.
	lg := Fold(rowsOf(t, user, []llm.Message{user}, asked))
	if len(lg.History) != 3 || lg.History[2].Parts[0].Type != llm.PartToolResult || !lg.History[2].Parts[0].IsError {
		t.Fatalf("history = %+v", lg.History)
	}
	// Agent text after the last context record is an answer cut short.
	lg = Fold(rowsOf(t, user, chunk(EventMessageChunk, "m", "half an ans"), chunk(EventMessageChunk, "m", "wer")))
	if len(lg.History) != 2 || !strings.HasPrefix(lg.History[1].Parts[0].Text, "half an answer\n\n[This answer was interrupted") {
		t.Fatalf("history = %+v", lg.History)
	}
}

// BenchmarkFold folds logs of one answer streamed as n one-character
// chunks (the merged case of session/load) and of n chunks alternating
// between thinking and text (nothing merges). Linear: 100k costs about ten
// times 10k.
func BenchmarkFold(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, shape := range []string{"merged", "alternating"} {
			items := make([]any, 0, n)
			for i := range n {
				ev := chunk(EventMessageChunk, "m", "x")
				if shape == "alternating" && i%2 == 0 {
					ev = chunk(EventThoughtChunk, "t", "y")
				}
				items = append(items, ev)
			}
			rows := rowsOf(b, items...)
			b.Run(fmt.Sprintf("%s-%dk", shape, n/1000), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if lg := Fold(rows); len(lg.Entries()) == 0 {
						b.Fatal("empty fold")
					}
				}
			})
		}
	}
}

// A streamed answer's chunks are stored as one row per message (a chunk
// with other fields, another kind or another message starts a row), any
// read of the log first gets what the log holds back, and the folded
// replay is what the chunks say.
func TestEventLogMergesStreamedChunksIntoOneRowPerMessage(t *testing.T) {
	st := storeWithSession(t, "")
	ctx := t.Context()
	l := &eventLog{id: "s1", store: st}
	member := &Member{ID: "sub_1", Name: "x", Depth: 1}
	for _, ev := range []Event{
		chunk(EventThoughtChunk, "t1", "hm"), chunk(EventThoughtChunk, "t1", "m"),
		chunk(EventMessageChunk, "m1", "a"), chunk(EventMessageChunk, "m1", "b"), chunk(EventMessageChunk, "m1", "c"),
		{Kind: EventMessageChunk, MessageID: "m1", Content: &Block{Type: BlockText, Text: "tagged"}, Tags: Tags{Member: member}},
		{Kind: EventMessageChunk, MessageID: "m1", Content: &Block{Type: BlockText, Text: "!"}, Tags: Tags{Member: member}},
		{Kind: EventToolCall, ToolCall: &ToolCall{ID: "c1", Name: "read", Status: ToolPending}},
		chunk(EventMessageChunk, "m2", "d"), chunk(EventMessageChunk, "m2", "e"),
	} {
		l.event(ev)
	}
	rows, err := st.Events(ctx, "s1") // asks the log for what it holds
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		var ev Event
		if err := json.Unmarshal(r.Payload, &ev); err != nil {
			t.Fatal(err)
		}
		text := ""
		if ev.Content != nil {
			text = ev.Content.Text
		}
		got = append(got, fmt.Sprintf("%s/%s:%s meta=%v", r.Kind, ev.MessageID, text, ev.Member != nil))
	}
	want := []string{
		"agent_thought_chunk/t1:hmm meta=false", "agent_message_chunk/m1:abc meta=false", "agent_message_chunk/m1:tagged! meta=true",
		"tool_call/: meta=false", "agent_message_chunk/m2:de meta=false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := l.knownSeq.Load(); n != int64(len(want)) {
		t.Errorf("knownSeq %d after %d rows", n, len(want))
	}
	entries := Fold(rows).Entries()
	if len(entries) != 4 || entries[1].Content.Text != "abctagged!" || entries[3].Content.Text != "de" {
		t.Errorf("folded entries: %+v", entries)
	}

	// close appends what the log holds.
	l.close()
	l.event(chunk(EventMessageChunk, "m3", "late"))
	l.close()
	if rows, _ = st.Events(ctx, "s1"); len(rows) != len(want)+1 {
		t.Errorf("%d rows after close, want %d", len(rows), len(want)+1)
	}
}

// settle makes one event durable, as another process reading the file sees
// it: the text the log holds back is appended and committed once an event
// in it is settled, while the store's Sync (the write barrier for every
// other frame) leaves the held text alone.
func TestSettleCommitsTheHeldChunkASyncLeavesHeld(t *testing.T) {
	path := t.TempDir() + "/s.db"
	st := storeWithSession(t, path)
	ctx := t.Context()
	other, err := store.Open(path) // reads only what is committed
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	stored := func() string {
		rows, err := other.Events(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			var ev Event
			if err := json.Unmarshal(r.Payload, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Content != nil {
				got = append(got, ev.Content.Text)
			}
		}
		return strings.Join(got, "|")
	}

	l := &eventLog{id: "s1", store: st}
	first := l.event(chunk(EventMessageChunk, "m1", "a"))
	l.event(Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: "c1", Name: "read", Status: ToolPending}})
	held := l.event(chunk(EventMessageChunk, "m2", "b"))
	if first == 0 || held <= first {
		t.Fatalf("event numbers %d, %d", first, held)
	}
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := stored(); got != "a" {
		t.Fatalf("after Sync the file holds %q, want the appended rows only (%q)", got, "a")
	}
	if !l.settle(held, 5*time.Second) {
		t.Fatal("settle of the held chunk failed")
	}
	if got := stored(); got != "a|b" {
		t.Fatalf("after settle the file holds %q, want %q", got, "a|b")
	}
	more := l.event(chunk(EventMessageChunk, "m2", "c"))
	if !l.settle(first, 5*time.Second) || stored() != "a|b" {
		t.Errorf("settling an early event appended later text: %q", stored())
	}
	if !l.settle(more, 5*time.Second) || stored() != "a|b|c" {
		t.Errorf("after settling the last chunk the file holds %q", stored())
	}
}

// settle waits for the event's own row, not for rows appended after it: an
// event whose row is committed is settled while a later row cannot commit
// (another connection holds the write lock), and the later row settles once
// the lock is gone.
func TestSettleWaitsForTheEventsOwnRowOnly(t *testing.T) {
	path := t.TempDir() + "/s.db"
	st := storeWithSession(t, path)
	ctx := t.Context()
	l := &eventLog{id: "s1", store: st}
	first := l.event(Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: "c1", Name: "read", Status: ToolPending}})
	if !l.settle(first, 5*time.Second) {
		t.Fatal("settle of the first event failed")
	}

	locker, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	tx, err := locker.BeginTx(ctx, nil) // takes the write lock
	if err != nil {
		t.Fatal(err)
	}
	later := l.event(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "c1", Status: ToolCompleted}})
	l.context(llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("x")}})
	if !l.settle(first, 2*time.Second) {
		t.Error("settle of a committed event waited for rows appended after it")
	}
	if l.settle(later, 50*time.Millisecond) {
		t.Error("a row was settled while another connection held the write lock")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if !l.settle(later, 10*time.Second) {
		t.Error("settle of the later event failed once the lock was gone")
	}
}

// The turn's first shown event holds the turn until the front end asks its
// Stored (right before its writer writes the frame), so the model's next
// events do not keep that writer from the CPU; the wait ends when Stored is
// asked, however long its bound.
func TestFirstShownEventWaitsForTheFrontEndToTakeIt(t *testing.T) {
	st := storeWithSession(t, "")
	defer func(d time.Duration) { firstShownWait = d }(firstShownWait)
	firstShownWait = time.Hour
	front := newFakeFront()
	c := newConversation("s1", st, slog.New(slog.DiscardHandler), front)
	c.recordPrompt([]Block{{Type: BlockText, Text: "hi"}}, "", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.emit(chunk(EventMessageChunk, "m1", "first"))
	}()
	ev := <-front.emits
	// emit is blocked waiting for Stored: seen in its goroutine's stack,
	// polled (emit returning first fails the test).
	for blocked := false; !blocked; {
		select {
		case <-done:
			t.Fatal("the first shown event returned before the front end asked Stored")
		default:
		}
		buf := make([]byte, 1<<20)
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			// Blocked in emit's own select, not in one below it.
			lines := strings.SplitN(g, "\n", 3)
			if len(lines) > 1 && strings.Contains(lines[0], "[select") && strings.Contains(lines[1], "(*conversation).emit(") {
				blocked = true
			}
		}
		runtime.Gosched()
	}
	if ev.Stored == nil || !ev.Stored() {
		t.Fatal("the first event's Stored failed")
	}
	<-done
	// Later events do not wait.
	c.emit(chunk(EventMessageChunk, "m1", "second"))
}
