package agent

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
)

// streamAnswer records m's texts as a model streams them: thought chunks
// for its thinking parts, message chunks of chunk bytes for its text parts.
func streamAnswer(l *eventLog, m llm.Message, chunk int) {
	for _, p := range m.Parts {
		kind := EventMessageChunk
		switch p.Type {
		case llm.PartThinking:
			kind = EventThoughtChunk
		case llm.PartText:
		default:
			continue
		}
		for rest := p.Text; rest != ""; {
			piece := cutText(rest, chunk)
			l.event(Event{Kind: kind, MessageID: "m-" + string(p.Type), Content: &Block{Type: BlockText, Text: piece}})
			rest = rest[len(piece):]
		}
	}
}

// longAnswer is an answer with two long texts (with characters JSON
// escapes) and a short one between, after a long thinking part.
func longAnswer() llm.Message {
	first := strings.Repeat("line \"one\"\tü\\\n", maxContextText/6)
	second := strings.Repeat("<b>two</b> é\n", maxContextText/5)
	return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		{Type: llm.PartThinking, Text: strings.Repeat("hmm ", maxContextText/2), Signature: "sig"},
		llm.Text(first), llm.Text("short, between"), llm.Text(second),
	}}
}

// contextTextBytes sums the payloads of rows' context_text rows.
func contextTextBytes(rows []store.Event) int {
	n := 0
	for _, r := range rows {
		if r.Kind == recordContextText {
			n += len(r.Payload)
		}
	}
	return n
}

// The texts of an answer whose chunks were just stored are not stored a
// second time in the model context's record (issue 36: a 10 MB answer was
// written twice, the second time after its last chunk was shown); every
// fold gives back the message exactly, its thinking (not an answer text)
// from the context_text pieces.
func TestStreamedAnswerIsStoredOnceAndFoldedBackExactly(t *testing.T) {
	st := storeWithSession(t, "")
	l := &eventLog{id: "s1", store: st}
	user := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("go")}}
	l.context(user)
	m := longAnswer()
	streamAnswer(l, m, 4096)
	l.context(m)
	l.close()
	rows, err := st.Events(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	thinking := len(m.Parts[0].Text)
	if n := contextTextBytes(rows); n > thinking*11/10 {
		t.Errorf("context_text rows hold %d bytes: the %d of the thinking and the answer's %d again",
			n, thinking, len(m.Parts[1].Text)+len(m.Parts[3].Text))
	}
	want := []llm.Message{user, m}
	if h := Fold(rows).History; !reflect.DeepEqual(h, want) {
		t.Errorf("Fold's history differs from what was recorded (%d messages)", len(h))
	}
	lg, err := FoldStored(t.Context(), st, "s1")
	if err != nil || !reflect.DeepEqual(lg.History, want) {
		t.Errorf("FoldStored's history differs from what was recorded (%v)", err)
	}
	lg, err = FoldStream(t.Context(), st, "s1", 1<<14, func(Event) {})
	if err != nil || !reflect.DeepEqual(lg.History, want) {
		t.Errorf("FoldStream's history differs from what was recorded (%v)", err)
	}
}

// A context text that is not what the chunks since the last context
// record hold is stored whole, in pieces: an answer whose chunks differ,
// one recorded by a log that has not yet recorded a context row (the rows
// before it may hold another process's chunks), and a user's text.
func TestTextsThatAreNotTheStreamedAnswerAreStoredInPieces(t *testing.T) {
	for name, record := range map[string]func(l *eventLog, m llm.Message) llm.Message{
		"chunks differ": func(l *eventLog, m llm.Message) llm.Message {
			l.context(llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("go")}})
			streamAnswer(l, m, 4096)
			m.Parts[3].Text += "!" // the message says more than was streamed
			return m
		},
		"no context row before": func(l *eventLog, m llm.Message) llm.Message {
			streamAnswer(l, m, 4096)
			return m
		},
		"a chunk not valid UTF-8": func(l *eventLog, m llm.Message) llm.Message {
			l.context(llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("go")}})
			m.Parts[1].Text = "caf\xc3" + m.Parts[1].Text // stored as U+FFFD
			streamAnswer(l, m, 4096)
			return m
		},
		"a user's text": func(l *eventLog, m llm.Message) llm.Message {
			l.context(llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("go")}})
			streamAnswer(l, m, 4096)
			m.Role = llm.RoleUser
			return m
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := storeWithSession(t, "")
			l := &eventLog{id: "s1", store: st}
			m := record(l, longAnswer())
			l.context(m)
			l.close()
			rows, err := st.Events(t.Context(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			texts := 0
			for _, p := range m.Parts {
				texts += len(p.Text)
			}
			if n := contextTextBytes(rows); n < texts {
				t.Errorf("context_text rows hold %d bytes, want the %d of the message's texts", n, texts)
			}
			// What was recorded, as JSON gives it back (U+FFFD for
			// invalid bytes).
			b, _ := json.Marshal(m)
			var want llm.Message
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			h := Fold(rows).History
			if len(h) == 0 || !reflect.DeepEqual(h[len(h)-1], want) {
				t.Errorf("Fold's last message differs from what was recorded")
			}
		})
	}
}
