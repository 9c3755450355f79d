package anthropic

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

const testKey = "sk-ant-test-configured"

// newTestModel builds a model pointed at fake with the given idle timeout
// (0: the default).
func newTestModel(t *testing.T, fake *fakeanthropic.Server, idle time.Duration) *model {
	t.Helper()
	m, err := New(llm.ProviderConfig{Provider: "anthropic", Model: "claude-test-1", APIKey: testKey, BaseURL: fake.URL()})
	if err != nil {
		t.Fatal(err)
	}
	am := m.(*model)
	if idle > 0 {
		am.idle = idle
	}
	return am
}

func userText(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text(s)}}
}

// collect drains a stream, returning its events and the error that ended
// it, if any.
func collect(ctx context.Context, m llm.Model, req llm.Request) ([]llm.Event, error) {
	var evs []llm.Event
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func mustCollect(t *testing.T, m llm.Model, req llm.Request) []llm.Event {
	t.Helper()
	evs, err := collect(t.Context(), m, req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != llm.EventStop {
		t.Fatalf("stream did not end with EventStop: %+v", evs)
	}
	return evs
}

// assistantMessage assembles the events of one response into the message
// a caller stores and sends back, the way the agent loop does.
func assistantMessage(evs []llm.Event) llm.Message {
	parts := map[int]*llm.Part{}
	var order []int
	part := func(i int, typ llm.PartType) *llm.Part {
		if p, ok := parts[i]; ok {
			return p
		}
		parts[i] = &llm.Part{Type: typ}
		order = append(order, i)
		return parts[i]
	}
	for _, ev := range evs {
		switch ev.Type {
		case llm.EventTextDelta:
			part(ev.Index, llm.PartText).Text += ev.Text
		case llm.EventThinkingDelta:
			part(ev.Index, llm.PartThinking).Text += ev.Text
		case llm.EventSignature:
			part(ev.Index, llm.PartThinking).Signature += ev.Text
		case llm.EventToolUseEnd:
			p := part(ev.Index, llm.PartToolUse)
			p.ToolUseID, p.ToolName, p.Input = ev.ToolUseID, ev.ToolName, ev.Input
		}
	}
	slices.Sort(order)
	msg := llm.Message{Role: llm.RoleAssistant}
	for _, i := range order {
		msg.Parts = append(msg.Parts, *parts[i])
	}
	return msg
}

func eventsOf(evs []llm.Event, typ llm.EventType) []llm.Event {
	var out []llm.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// sameJSON reports whether a and b encode the same value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %s", a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}
