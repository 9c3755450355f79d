package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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
	q := a.takeUpdates(true)
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
	if q := a.takeUpdates(true); len(q) != 1 {
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

// appendJSONString reads a JSON string as the decoder does.
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
		if n := stringEnd([]byte(c + `,"more":1}`)); n != len(c) {
			t.Errorf("stringEnd(%q) = %d, want %d", c, n, len(c))
		}
		got, ok := appendJSONString([]byte("before"), []byte(c))
		if !ok || string(got) != "before"+want {
			t.Errorf("appendJSONString(%q) = %q, %v; the decoder: %q", c, got, ok, want)
		}
	}
}

// Chunks in the quick layout join the queued run without being decoded
// (joinQueued): what the UI takes is what decoding each chunk and
// merging them gives, escapes, non-ASCII text and bytes that are not
// UTF-8 included, and the run ends where the message, kind or session
// changes.
func TestQuickChunksJoinAsDecoded(t *testing.T) {
	texts := []string{`x`, `a \"q\" \\ \n`, `é\u00e9`, `\ud83d\ude00`, "\xff\xfe", ``, `tail `}
	type sent struct{ session, kind, msgID, text string }
	var chunks []sent
	for i := 0; i < 300; i++ {
		c := sent{session: "s1", kind: "agent_message_chunk", text: texts[i%len(texts)]}
		switch {
		case i%50 == 49:
			c.session = "s2"
		case i%40 == 39:
			c.kind = "agent_thought_chunk"
		case i%30 >= 25:
			c.msgID = "m" + string(rune('0'+i/30%10))
		}
		chunks = append(chunks, c)
	}
	a := &agent{send: func(any) {}}
	for _, c := range chunks {
		params := `{"sessionId":"` + c.session + `","update":{"sessionUpdate":"` + c.kind + `","content":{"type":"text","text":"` + c.text + `"}`
		if c.msgID != "" {
			params += `,"messageId":"` + c.msgID + `"`
		}
		params += `}}`
		if _, ok := scanChunk([]byte(params)); !ok {
			t.Fatalf("not in the quick layout: %s", params)
		}
		a.HandleNotification(context.Background(), "session/update", json.RawMessage(params))
	}
	// The reference: each chunk decoded, consecutive ones of one message merged.
	var want []string
	last := sent{}
	for i, c := range chunks {
		var text string
		if err := json.Unmarshal([]byte(`"`+c.text+`"`), &text); err != nil {
			t.Fatal(err)
		}
		if i > 0 && c.session == last.session && c.kind == last.kind && c.msgID == last.msgID {
			want[len(want)-1] += text
		} else {
			want = append(want, c.session+" "+c.kind+" "+c.msgID+" "+text)
		}
		last = c
	}
	var got []string
	for _, u := range a.takeUpdates(true) {
		var c textChunk
		if err := json.Unmarshal(u.rawUpdate(), &c); err != nil {
			t.Fatal(err)
		}
		if u.text == nil || *u.text != c {
			t.Errorf("update %s decoded on the agent's side as %+v", u.rawUpdate(), u.text)
		}
		got = append(got, u.sessionID+" "+c.SessionUpdate+" "+c.MessageID+" "+c.Content.Text)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("queued updates:\n%q\nwant:\n%q", got, want)
	}
}

// A chunk that joins the queued run allocates nothing: at 200,000 chunks
// a second, the garbage collector's pauses (stretched by a busy machine)
// delayed the echo of keys (docs/tui.md, Measured).
func TestQuickJoinAllocatesNothing(t *testing.T) {
	a := &agent{send: func(any) {}}
	params := json.RawMessage(`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`)
	a.HandleNotification(context.Background(), "session/update", params)
	a.run.text = make([]byte, 0, 1<<20) // room: the run's own growth is not what is measured
	if n := testing.AllocsPerRun(1000, func() {
		a.HandleNotification(context.Background(), "session/update", params)
	}); n != 0 {
		t.Errorf("a chunk joining the run: %v allocations, want 0", n)
	}
}

// One wake of the UI is on its way at a time: a key or a print that takes
// the queue meanwhile does not let the next chunk send another. (Each
// did: the UI was woken about 600 times a second by a stream, not 60,
// and drew the stream's tail at each.)
func TestOneWakeOnItsWay(t *testing.T) {
	wakes := make(chan struct{}, 100)
	a := &agent{send: func(msg any) {
		if _, ok := msg.(updatesMsg); ok {
			wakes <- struct{}{}
		}
	}}
	a.taken = time.Now() // just taken: the next wake waits for its frame
	for i := 0; i < 10; i++ {
		notify(t, a, "s1", `{"sessionUpdate":"tool_call","toolCallId":"t`+string(rune('0'+i))+`","title":"x"}`)
		if q := a.takeUpdates(false); len(q) != 1 { // a key's Update takes it
			t.Fatalf("take %d: %d updates", i, len(q))
		}
	}
	select {
	case <-wakes:
	case <-time.After(10 * time.Second):
		t.Fatal("the UI was not woken")
	}
	a.takeUpdates(true)
	time.Sleep(5 * updateFrame)
	if n := len(wakes); n != 0 {
		t.Errorf("%d more wakes on their way for one queue, want none", n)
	}
	notify(t, a, "s1", textUpdate("agent_message_chunk", "", "after"))
	select {
	case <-wakes: // the next update wakes the UI again
	case <-time.After(10 * time.Second):
		t.Fatal("an update after the wake was handled did not wake the UI")
	}
}

// HandleNotification keeps nothing of its params (the connection lends
// them, acp.Options.LendParams): overwriting them after each call changes
// nothing the UI takes.
func TestNotificationKeepsNothingOfParams(t *testing.T) {
	a := &agent{send: func(any) {}}
	updates := []string{
		`{"content":{"type":"text","text":"one "},"sessionUpdate":"agent_message_chunk"}`, // the decoder's way
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"two "}}`, // joined in place
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"three"}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"x"}`,
		`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"alone"}}`, // a run of one, read in place
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"four"},"_meta":{"k":1}}`,
	}
	var want []string
	for _, u := range updates {
		params := []byte(`{"sessionId":"s1","update":` + u + `}`)
		want = append(want, string(params))
		a.HandleNotification(context.Background(), "session/update", params)
		for i := range params {
			params[i] = '#'
		}
	}
	var got []string
	for _, u := range a.takeUpdates(true) {
		got = append(got, u.sessionID+" "+string(u.rawUpdate()))
		if u.text != nil {
			got = append(got, u.text.Content.Text)
		}
	}
	all := strings.Join(got, "\n")
	if strings.Contains(all, "#") || !strings.Contains(all, "one two three") || !strings.Contains(all, `"toolCallId":"t1"`) || !strings.Contains(all, `"text":"four"`) || !strings.Contains(all, `"text":"alone"`) {
		t.Errorf("what the UI takes changed with the params:\n%s", all)
	}
}

// A UI that printed all it had is woken by the next update at once, not
// at the wake's rate: the terminal would idle up to a frame while a long
// answer's next lines wait.
func TestUIWokenAtOnceAfterItsPrint(t *testing.T) {
	var mu sync.Mutex
	var sent []any
	a := &agent{send: func(msg any) { mu.Lock(); sent = append(sent, msg); mu.Unlock() }}
	m := testModel()
	m.ag = a
	a.taken = time.Now() // just taken: a wake waits for its frame
	notify(t, a, "s1", textUpdate("agent_message_chunk", "m1", "one\n"))
	a.takeUpdates(false) // a print's message took it; the wake is on its way
	m.printQ, m.printing, m.printDone = []string{"x"}, 1, 1
	m.Update(printedMsg{}) // the print ends: nothing left to print
	notify(t, a, "s1", textUpdate("agent_message_chunk", "m1", "two\n"))
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 1 {
		t.Fatalf("%d messages sent at once, want 1", len(sent))
	}
	if _, ok := sent[0].(fedMsg); !ok {
		t.Errorf("sent %T, want fedMsg", sent[0])
	}
}

// A run of chunks reuses the text buffer of the run before it: a run the
// UI takes late holds megabytes, and growing a new buffer to its size
// cost more than the copy the UI takes.
func TestRunTextIsReused(t *testing.T) {
	a := &agent{send: func(any) {}}
	text := strings.Repeat("x", 4096)
	params := json.RawMessage(`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}`)
	run := func() {
		for range 256 { // 1 MiB
			a.HandleNotification(context.Background(), "session/update", params)
		}
		a.takeUpdates(true)
	}
	run()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	run()
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 3<<19 {
		t.Errorf("a second run of 1 MiB allocated %d bytes, want about 1 MiB (the UI's copy)", n)
	}
}

// stringEnd finds the quote that ends a JSON string as a walk byte by
// byte does, escaped quotes and runs of backslashes included.
func TestStringEndAsAWalk(t *testing.T) {
	walk := func(b []byte) int {
		if len(b) == 0 || b[0] != '"' {
			return -1
		}
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return -1
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		b := []byte{'"'}
		for range r.IntN(20) {
			b = append(b, `ab\"`[r.IntN(4)])
		}
		if got, want := stringEnd(b), walk(b); got != want {
			t.Fatalf("stringEnd(%q) = %d, want %d", b, got, want)
		}
	}
}

// A long stretch of one message the UI has not taken is queued as runs of
// at most runMax bytes, one after the other, its text whole and in order,
// whichever way each chunk is read (scanChunk's or the decoder's).
func TestLongRunIsQueuedInParts(t *testing.T) {
	a := &agent{send: func(any) {}}
	var want strings.Builder
	for i := range 300 {
		text := fmt.Sprintf("%04d %s\n", i, strings.Repeat(string(rune('a'+i%26)), 1000))
		want.WriteString(text)
		if i%7 == 0 { // not in scanChunk's layout: decoded
			notify(t, a, "s1", `{"content":{"text":`+strconv.Quote(text)+`,"type":"text"},"messageId":"m1","sessionUpdate":"agent_message_chunk"}`)
		} else {
			notify(t, a, "s1", textUpdate("agent_message_chunk", "m1", text))
		}
	}
	q := a.takeUpdates(true)
	var got strings.Builder
	for _, u := range q {
		if u.text == nil || u.text.SessionUpdate != "agent_message_chunk" || u.text.MessageID != "m1" || u.sessionID != "s1" {
			t.Fatalf("update %+v: want a text chunk of m1", u)
		}
		if n := len(u.text.Content.Text); n > runMax {
			t.Errorf("a run of %d bytes, over runMax (%d)", n, runMax)
		}
		got.WriteString(u.text.Content.Text)
	}
	if len(q) < 300*1006/runMax {
		t.Errorf("%d runs for %d bytes", len(q), want.Len())
	}
	if got.String() != want.String() {
		t.Errorf("the runs hold %d bytes, not the %d sent in order", got.Len(), want.Len())
	}
}

// A chunk whose text has escapes is decoded into the agent's scratch
// buffer and copied once: two allocations, the text's and its session
// id's, and each chunk decoded whole whatever the one before it left in
// the buffer.
func TestEscapedChunkTextIsCopiedOnce(t *testing.T) {
	a := &agent{send: func(any) {}}
	for i := range 40 {
		text := strings.Repeat("line \"quoted\"\tand\\more\n", 40-i) + fmt.Sprint(i)
		notify(t, a, "s1", textUpdate("agent_message_chunk", "m1", text))
		q := a.takeUpdates(true)
		if len(q) != 1 || q[0].text == nil || q[0].text.Content.Text != text {
			t.Fatalf("chunk %d: updates %+v, want one of text %q", i, q, text)
		}
	}
	enc, _ := json.Marshal(strings.Repeat("line \"quoted\"\n", 300))
	params := []byte(`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":` + string(enc) + `}}}`)
	q, ok := scanChunk(params)
	if !ok {
		t.Fatal("scanChunk refused the chunk")
	}
	var scratch []byte
	if n := testing.AllocsPerRun(100, func() { q.chunk(&scratch) }); n != 2 {
		t.Errorf("decoding a chunk with escapes: %v allocations, want 2 (its text and session id)", n)
	}
}
