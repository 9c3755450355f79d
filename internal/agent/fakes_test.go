package agent

import (
	"context"
	"encoding/json"
	"iter"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/tool"
)

// waitLimit bounds every wait of these tests on the code under test: a
// hang fails the test instead of the whole run. It is never the condition
// a test checks.
const waitLimit = 10 * time.Second

// reply is one scripted model response. With hold set, the model yields
// events[:at] and then waits for its context to end (a model that has not
// answered yet, or stalls mid-stream).
type reply struct {
	events []llm.Event
	hold   bool
	at     int
}

// fakeModel answers each request with the next reply and remembers the
// requests. onStream, if set, runs when a request arrives.
type fakeModel struct {
	info     llm.ModelInfo
	mu       sync.Mutex
	replies  []reply
	requests []llm.Request
	onStream func(llm.Request)
	streams  chan int // receives the request's number as each stream starts
}

func newFakeModel(replies ...reply) *fakeModel {
	return &fakeModel{info: llm.ModelInfo{ID: "fake:model", ContextWindow: 100_000}, replies: replies, streams: make(chan int, 100)}
}

func (m *fakeModel) Info() llm.ModelInfo { return m.info }

func (m *fakeModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		m.mu.Lock()
		n := len(m.requests)
		m.requests = append(m.requests, req)
		var r reply
		if len(m.replies) > 0 {
			r, m.replies = m.replies[0], m.replies[1:]
		} else {
			r = reply{events: answer("(no more replies)")}
		}
		hook := m.onStream
		m.mu.Unlock()
		if hook != nil {
			hook(req)
		}
		m.streams <- n
		evs := r.events
		if r.hold {
			evs = evs[:r.at]
		}
		for _, ev := range evs {
			if ctx.Err() != nil {
				yield(llm.Event{}, ctx.Err())
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
		if r.hold {
			<-ctx.Done()
			yield(llm.Event{}, ctx.Err())
		}
	}
}

func (m *fakeModel) request(t *testing.T, i int) llm.Request {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if i >= len(m.requests) {
		t.Fatalf("the model got %d requests, want more than %d", len(m.requests), i)
	}
	return m.requests[i]
}

// answer is a text response in the given chunks, then end_turn.
func answer(chunks ...string) []llm.Event {
	var evs []llm.Event
	for _, c := range chunks {
		evs = append(evs, llm.Event{Type: llm.EventTextDelta, Text: c})
	}
	return append(evs, llm.Event{Type: llm.EventStop, StopReason: llm.StopEndTurn})
}

// callTool is a response that asks for one tool call.
func callTool(id, name, input string) []llm.Event {
	return []llm.Event{
		{Type: llm.EventToolUseStart, Index: 1, ToolUseID: id, ToolName: name},
		{Type: llm.EventToolUseEnd, Index: 1, ToolUseID: id, ToolName: name, Input: json.RawMessage(input)},
		{Type: llm.EventStop, StopReason: llm.StopToolUse},
	}
}

// fakeFront records what a session shows and answers permission requests
// with answer, or, with block set, waits until the request is cancelled.
type fakeFront struct {
	mu     sync.Mutex
	events []Event
	asked  []ToolCall
	answer Answer
	block  bool
	emits  chan Event    // every emitted event, for tests that wait on one
	asks   chan ToolCall // every permission request
}

func newFakeFront() *fakeFront {
	return &fakeFront{answer: AllowOnce, emits: make(chan Event, 1000), asks: make(chan ToolCall, 10)}
}

func (f *fakeFront) Emit(ev Event) {
	f.mu.Lock()
	f.events = append(f.events, ev)
	f.mu.Unlock()
	f.emits <- ev
}

func (f *fakeFront) RequestPermission(ctx context.Context, call ToolCall) (Answer, error) {
	f.mu.Lock()
	f.asked = append(f.asked, call)
	block, ans := f.block, f.answer
	f.mu.Unlock()
	f.asks <- call
	if block {
		<-ctx.Done()
		return RejectOnce, ctx.Err()
	}
	return ans, nil
}

func (f *fakeFront) shown() []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Event(nil), f.events...)
}

// waitFor returns the first emitted event (from now) that match accepts.
func (f *fakeFront) waitFor(t *testing.T, what string, match func(Event) bool) Event {
	t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case ev := <-f.emits:
			if match(ev) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s was shown", what)
		}
	}
}

// fakeTool is a tool that needs execute access. With block set, it runs
// until its context ends.
type fakeTool struct {
	name    string
	block   bool
	started chan struct{}
	mu      sync.Mutex
	runs    int
}

func newFakeTool(name string) *fakeTool {
	return &fakeTool{name: name, started: make(chan struct{}, 10)}
}

func (f *fakeTool) Name() string                 { return f.name }
func (f *fakeTool) Description() string          { return "a test tool" }
func (f *fakeTool) InputSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (f *fakeTool) Describe(*tool.Env, json.RawMessage) tool.Preview {
	return tool.Preview{Kind: tool.KindExecute, Title: "Run " + f.name, Access: tool.AccessExecute, Command: f.name}
}

func (f *fakeTool) Run(ctx context.Context, _ *tool.Env, _ tool.Call) (tool.Result, error) {
	f.mu.Lock()
	f.runs++
	f.mu.Unlock()
	f.started <- struct{}{}
	if f.block {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}
	return tool.Result{Output: f.name + " output", Content: []tool.Content{textContent(f.name + " output")}}, nil
}

func (f *fakeTool) ranTimes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs
}

// harness is an agent with a fake model, tool and front end, and a session
// stored in a temporary database.
type harness struct {
	agent *Agent
	model *fakeModel
	front *fakeFront
	tool  *fakeTool
	s     *Session
	db    string
}

func newHarness(t *testing.T, mode permission.Mode, replies ...reply) *harness {
	t.Helper()
	h := &harness{model: newFakeModel(replies...), front: newFakeFront(), tool: newFakeTool("run"),
		db: filepath.Join(t.TempDir(), "sessions.db")}
	h.agent = New(Config{Model: h.model, Tools: func() []tool.Tool { return []tool.Tool{h.tool} }, System: "test system",
		StorePath: h.db, Permissions: Permissions{Mode: mode}})
	t.Cleanup(func() { _ = h.agent.Close() })
	s, err := h.agent.NewSession(SessionOptions{Cwd: t.TempDir(), Front: h.front})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	h.s = s
	return h
}

type runResult struct {
	stop StopReason
	err  error
}

// start starts a turn for text and runs it in the background.
func (h *harness) start(t *testing.T, text string) (*Turn, <-chan runResult) {
	t.Helper()
	turn, err := h.s.StartTurn([]Block{{Type: BlockText, Text: text}})
	if err != nil {
		t.Fatalf("StartTurn(%q): %v", text, err)
	}
	done := make(chan runResult, 1)
	go func() {
		stop, err := turn.Run()
		done <- runResult{stop, err}
	}()
	return turn, done
}

// prompt runs one turn to its end.
func (h *harness) prompt(t *testing.T, text string) StopReason {
	t.Helper()
	_, done := h.start(t, text)
	r := wait(t, done)
	if r.err != nil {
		t.Fatalf("turn %q: %v", text, r.err)
	}
	return r.stop
}

func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatal("timed out")
	}
	panic("unreachable")
}
