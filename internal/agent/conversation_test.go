package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/tool"
)

// withUsage puts a usage report before a response's stop event.
func withUsage(evs []llm.Event, input int64) []llm.Event {
	n := len(evs)
	out := append([]llm.Event(nil), evs[:n-1]...)
	return append(out, llm.Event{Type: llm.EventUsage, Usage: llm.Usage{InputTokens: input, OutputTokens: 5}}, evs[n-1])
}

func texts(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+":"+m.Parts[0].Text)
	}
	return out
}

func TestAFullContextIsCompactedBeforeTheNextRequestAndStaysCompactedAfterLoad(t *testing.T) {
	h := newHarness(t, permission.ModeDefault,
		reply{events: withUsage(answer("a1"), 10)},
		reply{events: withUsage(answer("a2"), 900)}, // 905 of 1000: over the threshold
		reply{events: answer("the summary")},
		reply{events: answer("a3")})
	h.model.info.ContextWindow = 1000
	h.s.settings.model = h.model // the window is read from the model's info
	for _, p := range []string{"one", "two", "three"} {
		if stop := h.prompt(t, p); stop != StopEndTurn {
			t.Fatalf("%s: stop %s", p, stop)
		}
	}
	sum := h.model.request(t, 2)
	if sum.System != "You write precise summaries of coding sessions." || len(sum.Messages) != 3 ||
		!strings.HasPrefix(sum.Messages[2].Parts[0].Text, "Summarise the conversation above") {
		t.Fatalf("compaction request = %q %v", sum.System, texts(sum.Messages))
	}
	want := []string{
		"user:Summary of our conversation so far (older messages were compacted):\n\nthe summary",
		"assistant:Understood; I will continue from this summary.",
		"user:two", "assistant:a2", "user:three",
	}
	if got := texts(h.model.request(t, 3).Messages); !slices.Equal(got, want) {
		t.Errorf("request after compaction:\n%q\nwant\n%q", got, want)
	}
	notice := false
	for _, ev := range h.front.shown() {
		if ev.Content != nil && strings.HasPrefix(ev.Content.Text, "The context was nearly full, so I compacted the conversation: 2 earlier messages") {
			notice = true
		}
	}
	if !notice {
		t.Error("the user was not told about the compaction")
	}
	// A new process continues from the compacted context.
	h.s.Close()
	s2 := reload(t, h)
	if got := texts(s2.conv.messages()); !slices.Equal(got, append(want, "assistant:a3")) {
		t.Errorf("reloaded context = %q", got)
	}
}

func TestSlashCompactAndClearRunWithoutAskingTheModelToAnswer(t *testing.T) {
	h := newHarness(t, permission.ModeDefault,
		reply{events: answer("a1")}, reply{events: answer("a2")}, reply{events: answer("a3")}, reply{events: answer("short summary")})
	for _, p := range []string{"one", "two", "three"} {
		h.prompt(t, p)
	}
	if stop := h.prompt(t, "/compact the API"); stop != StopEndTurn {
		t.Fatalf("/compact: %s", stop)
	}
	if r := h.model.request(t, 3); !strings.HasSuffix(r.Messages[len(r.Messages)-1].Parts[0].Text, " Focus on: the API") {
		t.Errorf("/compact's focus did not reach the summary request: %q", texts(r.Messages))
	}
	if stop := h.prompt(t, "/clear"); stop != StopEndTurn {
		t.Fatalf("/clear: %s", stop)
	}
	if m := h.s.conv.messages(); len(m) != 0 {
		t.Errorf("context after /clear = %q", texts(m))
	}
	if n := len(h.model.requests); n != 4 {
		t.Errorf("the model got %d requests, want 4 (three answers and one summary)", n)
	}
}

// reload opens the harness's database in a new agent, as a new process
// would, and loads the session.
func reload(t *testing.T, h *harness) *Session {
	t.Helper()
	s, _ := reloadWithReplay(t, h)
	return s
}

func reloadWithReplay(t *testing.T, h *harness) (*Session, []Event) {
	t.Helper()
	a := New(Config{Model: h.model, Tools: func() []tool.Tool { return []tool.Tool{h.tool} }, StorePath: h.db})
	t.Cleanup(func() { _ = a.Close() })
	var replay []Event
	s, err := a.LoadSession(context.Background(), SessionOptions{ID: h.s.ID, Cwd: h.s.Cwd(), Front: newFakeFront(),
		Replay: func(ev Event) {
			ev = kept(ev)
			ev.Content = ev.Content.Decoded()
			replay = append(replay, ev)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, replay
}

// summary reduces events to what a reader sees: each message's text, each
// tool call with its latest status and content, plans.
func summary(evs []Event) []string {
	var out []string
	type state struct {
		at                    int
		title, status, output string
	}
	tools := map[string]*state{}
	for _, ev := range evs {
		switch ev.Kind {
		case EventUserChunk, EventMessageChunk, EventThoughtChunk:
			head := fmt.Sprintf("%s %s: ", ev.Kind, ev.MessageID)
			if n := len(out); n > 0 && strings.HasPrefix(out[n-1], head) {
				out[n-1] += ev.Content.Text
			} else {
				out = append(out, head+ev.Content.Text)
			}
		case EventToolCall, EventToolCallState:
			tc := ev.ToolCall
			st := tools[tc.ID]
			if st == nil {
				st = &state{at: len(out)}
				tools[tc.ID] = st
				out = append(out, "")
			}
			if tc.Title != "" {
				st.title = tc.Title
			}
			if tc.Status != "" {
				st.status = string(tc.Status)
			}
			if len(tc.Content) > 0 {
				st.output = tc.Content[0].Text
			}
		case EventPlan:
			out = append(out, fmt.Sprintf("plan %v", ev.Plan))
		}
	}
	for id, st := range tools {
		out[st.at] = fmt.Sprintf("tool %s %q [%s] %q", id, st.title, st.status, st.output)
	}
	return out
}

func TestTheReplayOfAStoredSessionShowsWhatWasStreamed(t *testing.T) {
	thinkAndCall := append([]llm.Event{
		{Type: llm.EventThinkingDelta, Index: 0, Text: "hm"}, {Type: llm.EventThinkingDelta, Index: 0, Text: "m"},
		{Type: llm.EventTextDelta, Index: 1, Text: "an"}, {Type: llm.EventTextDelta, Index: 1, Text: "swer"},
	}, callTool("tu1", "run", `{}`)...)
	h := newHarness(t, permission.ModeYolo,
		reply{events: thinkAndCall}, reply{events: withUsage(answer("do", "ne"), 40)},
		reply{events: withUsage(answer("second ", "turn"), 60)})
	var streamed []Event
	for _, p := range []string{"first prompt", "second prompt"} {
		// The prompt is stored, not streamed (the editor shows it itself).
		streamed = append(streamed, Event{Kind: EventUserChunk, MessageID: "prompt " + p, Content: &Block{Type: BlockText, Text: p}})
		before := len(h.front.shown())
		h.prompt(t, p)
		streamed = append(streamed, h.front.shown()[before:]...)
	}
	h.s.Close()
	_, replay := reloadWithReplay(t, h)

	// Message ids of prompts are made when stored: compare without them.
	strip := func(lines []string) []string {
		for i, l := range lines {
			if strings.HasPrefix(l, string(EventUserChunk)) {
				lines[i] = string(EventUserChunk) + ": " + l[strings.Index(l, ": ")+2:]
			}
		}
		return lines
	}
	got, want := strip(summary(replay)), strip(summary(streamed))
	if !slices.Equal(got, want) {
		t.Errorf("replay:\n%s\nstreamed:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(replay) < 2 || replay[len(replay)-1].Kind != EventUsage || replay[len(replay)-1].Usage.Used != 65 {
		t.Errorf("the replay does not end with the last context reading: %v", kinds(replay))
	}
	// Each message is one event in the replay.
	if n := len(kinds(replay)); n != 1+2+2+1+1+1+1 {
		t.Errorf("replay = %q", kinds(replay))
	}
}
