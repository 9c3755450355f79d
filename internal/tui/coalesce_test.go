package tui

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func notify(t *testing.T, a *agent, session, update string) {
	t.Helper()
	params := `{"sessionId":"` + session + `","update":` + update + `}`
	a.HandleNotification(context.Background(), "session/update", json.RawMessage(params))
}

func textUpdate(kind, msgID, text string) string {
	c := textChunk{SessionUpdate: kind, MessageID: msgID}
	c.Content.Type, c.Content.Text = "text", text
	b, _ := json.Marshal(c)
	return string(b)
}

// Consecutive text chunks of one message reach the UI as one update, in
// order, with nothing lost; any other update, another message, kind or
// session, or a chunk with fields of its own ends the run.
func TestQueuedChunksAreMerged(t *testing.T) {
	wakes := 0
	a := &agent{send: func(any) { wakes++ }}
	for i := 0; i < 1000; i++ {
		notify(t, a, "s1", textUpdate("agent_message_chunk", "m1", string(rune('a'+i%26))))
	}
	notify(t, a, "s1", textUpdate("agent_message_chunk", "m2", "A"))
	notify(t, a, "s1", textUpdate("agent_message_chunk", "m2", "B"))
	notify(t, a, "s1", `{"sessionUpdate":"tool_call","toolCallId":"t1","title":"x"}`)
	notify(t, a, "s1", textUpdate("agent_thought_chunk", "", "t1"))
	notify(t, a, "s1", textUpdate("agent_thought_chunk", "", "t2"))
	notify(t, a, "s1", textUpdate("agent_message_chunk", "", "C"))
	notify(t, a, "s2", textUpdate("agent_message_chunk", "", "D"))
	notify(t, a, "s2", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"D2"}}`) // the quick way
	notify(t, a, "s2", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"E"},"_meta":{"k":1}}`)
	notify(t, a, "s2", textUpdate("agent_message_chunk", "", "F"))
	notify(t, a, "s2", `{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"x","mimeType":"image/png"}}`)
	q := a.takeUpdates()
	if wakes != 1 {
		t.Errorf("the UI was woken %d times for one batch, want 1", wakes)
	}
	var want1 strings.Builder
	for i := 0; i < 1000; i++ {
		want1.WriteRune(rune('a' + i%26))
	}
	want := []string{
		"s1 agent_message_chunk m1 " + want1.String(),
		"s1 agent_message_chunk m2 AB",
		"s1 tool_call  ",
		"s1 agent_thought_chunk  t1t2",
		"s1 agent_message_chunk  C",
		"s2 agent_message_chunk  DD2",
		"s2 agent_message_chunk  E",
		"s2 agent_message_chunk  F",
		"s2 agent_message_chunk  ",
	}
	var got []string
	for _, u := range q {
		var c textChunk
		raw := u.rawUpdate()
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		got = append(got, u.sessionID+" "+c.SessionUpdate+" "+c.MessageID+" "+c.Content.Text)
		if plain := c.Content.Type == "text" && !strings.Contains(string(raw), "_meta"); plain != (u.text != nil) {
			t.Errorf("update %s decoded on the agent's side: %v", raw, u.text != nil)
		} else if plain && *u.text != c {
			t.Errorf("update %s decoded as %+v", raw, *u.text)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("queued updates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(string(q[6].rawUpdate()), `"_meta"`) {
		t.Errorf("a chunk with _meta was rewritten: %s", q[6].rawUpdate())
	}
	// After a take, a new batch starts: nothing merges into what the UI took.
	notify(t, a, "s2", textUpdate("agent_message_chunk", "", "G"))
	if q := a.takeUpdates(); len(q) != 1 {
		t.Errorf("after a take: %d updates", len(q))
	}
}

// quickChunk reads the common layouts of a text chunk, and what it reads
// is what the JSON decoder reads; it refuses anything else.
func TestQuickChunk(t *testing.T) {
	for _, tc := range []struct {
		params string
		quick  bool
	}{
		{`{"sessionId":"flood","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`, true},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"a \"q\" \\ \n é \u00e9 \ud83d\ude00"},"messageId":"m-1"}}`, true},
		{`{"sessionId":"s1","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":""}}}`, true},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"_meta":{"a":1}}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","annotations":{}}}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"messageId":"m","x":1}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call","content":{"type":"text","text":"x"}}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","text":"x"}}}`, false},
		{`{"sessionId":"s\"1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`, false},
		{`{ "sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`, false},
		{`{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}},"sessionId":"s1"}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}},"more":1}`, false},
	} {
		sid, c, ok := quickChunk([]byte(tc.params))
		if ok != tc.quick {
			t.Errorf("quickChunk(%s) ok = %v, want %v", tc.params, ok, tc.quick)
			continue
		}
		if !ok {
			continue
		}
		var want struct {
			SessionID string          `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
		}
		if err := json.Unmarshal([]byte(tc.params), &want); err != nil {
			t.Fatal(err)
		}
		wc, wok := mergeable(want.Update)
		if !wok || sid != want.SessionID || c != wc {
			t.Errorf("quickChunk(%s) = %q %+v, the decoder: %q %+v", tc.params, sid, c, want.SessionID, wc)
		}
	}
}

// jsonString reads a JSON string as the decoder does, or leaves it to the
// decoder (a \u escape, text that is not UTF-8).
func TestJSONStringReadsAsTheDecoder(t *testing.T) {
	cases := []string{`""`, `"x"`, `"a \"q\" \\ \/ \b\f\n\r\t é"`, `"\\"`, `"\\\""`, `"end\\"`, `"ünï"`,
		`"\u00e9"`, "\"\xff\"", `"a\nb\"c\\\\d"`, `"` + strings.Repeat(`0123456789\n`, 400) + `"`}
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		b := make([]byte, r.IntN(300))
		for i := range b {
			b[i] = "ab \n\t\"\\/é<"[r.IntN(11)]
		}
		q, _ := json.Marshal(string(b))
		cases = append(cases, string(q))
	}
	for _, c := range cases {
		var want string
		if err := json.Unmarshal([]byte(c), &want); err != nil {
			t.Fatalf("%q: %v", c, err)
		}
		got, n, ok := jsonString([]byte(c + `,"more":1}`))
		if !ok {
			if !strings.Contains(c, `\u`) && utf8.ValidString(c) {
				t.Errorf("%q left to the decoder", c)
			}
			continue
		}
		if got != want || n != len(c) {
			t.Errorf("jsonString(%q) = %q, %d; the decoder: %q, %d", c, got, n, want, len(c))
		}
	}
}
