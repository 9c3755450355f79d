package store

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

func TestRowFormsRoundTrip(t *testing.T) {
	head := kindHead("k")
	cases := []struct{ prev, payload string }{
		{"", ""},
		{"", `{"kind":"k",`},
		{"", `{"kind":"k","a":1}`},
		{"", `{"kind":"k"}`},
		{"", `{"kind":"other","a":1}`},
		{`{"kind":"k","t":"ab"}`, `{"kind":"k","t":"abc"}`},
		{`{"kind":"k","t":"abc"}`, `{"kind":"k","t":"ab"}`},
		{`aaaa`, `aa`},
		{`aa`, `aaaa`},
		{`xyz`, ``},
		{`{"kind":"k","t":"a"}`, `{"kind":"k","t":"a"}`},
	}
	for _, c := range cases {
		var prev []byte
		if c.prev != "" {
			prev = []byte(c.prev)
		}
		form, stored := encodeRow([]byte("junk"), []byte(c.payload), prev, head)
		stored = stored[4:]
		got, err := decodeRow(nil, form, stored, prev, head)
		if err != nil || string(got) != c.payload {
			t.Errorf("prev %q payload %q: form %d stored %q decodes to %q, %v", c.prev, c.payload, form, stored, got, err)
		}
		if len(stored) > len(c.payload) {
			t.Errorf("payload %q stored larger: %q", c.payload, stored)
		}
	}
	if _, err := decodeRow(nil, formDelta, []byte{5, 5}, []byte("abc"), head); err == nil {
		t.Error("delta longer than its base decoded")
	}
}

// TestChunksStoreSmallAndExact appends a streamed message in many commits,
// with a fork and other kinds between, and checks that every payload comes
// back byte for byte while the chunk rows hold a few bytes each.
func TestChunksStoreSmallAndExact(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		ctx := context.Background()
		mustCreate(t, s, Session{ID: "s", Cwd: "/w"})
		var want []string
		add := func(kind, p string) {
			t.Helper()
			if err := s.Append("s", kind, []byte(p)); err != nil {
				t.Fatal(err)
			}
			want = append(want, p)
		}
		for i := range 500 {
			add("agent_message_chunk", string(chunkPayload(i/100, 'a'+byte(i%26))))
			if i%37 == 0 {
				add("tool_call", fmt.Sprintf(`{"kind":"tool_call","toolCall":{"id":"c%d"}}`, i))
				if err := s.Flush(ctx); err != nil { // the next chunk's base is in an earlier commit
					t.Fatal(err)
				}
			}
		}
		if err := s.Fork(ctx, "s", Session{ID: "f", Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"s", "f"} {
			evs := mustEvents(t, s, id)
			if len(evs) != len(want) {
				t.Fatalf("%s: %d events, want %d", id, len(evs), len(want))
			}
			for i, ev := range evs {
				if string(ev.Payload) != want[i] || ev.Seq != int64(i+1) {
					t.Fatalf("%s event %d = %d %q, want %q", id, i, ev.Seq, ev.Payload, want[i])
				}
			}
			// ScanEvents reuses its buffers: each payload as it is seen.
			i := 0
			err := s.ScanEvents(ctx, id, func(ev Event) error {
				if i >= len(want) || string(ev.Payload) != want[i] || ev.Seq != int64(i+1) {
					t.Fatalf("%s scanned event %d = %d %q", id, i, ev.Seq, ev.Payload)
				}
				i++
				return nil
			})
			if err != nil || i != len(want) {
				t.Fatalf("%s: ScanEvents = %v after %d events, want %d", id, err, i, len(want))
			}
		}
		var chunkBytes, chunks int64
		err := s.readDB.QueryRow(`SELECT sum(length(e.payload)), count(*) FROM events e JOIN event_kinds k ON k.id = e.kind >> 2
	WHERE k.name = 'agent_message_chunk' AND e.session_pk = (SELECT pk FROM sessions WHERE id = 's')`).Scan(&chunkBytes, &chunks)
		if err != nil {
			t.Fatal(err)
		}
		if chunks != 500 || chunkBytes > 500*8 {
			t.Errorf("%d chunk rows hold %d payload bytes; want ≤ 8 each", chunks, chunkBytes)
		}
	})
}

func TestEachEventStopsOnCallbackError(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		mustCreate(t, s, Session{ID: "s", Cwd: "/w"})
		for i := range 10 {
			s.Append("s", "k", fmt.Appendf(nil, `{"i":%d}`, i))
		}
		stop := fmt.Errorf("enough")
		n := 0
		err := s.EachEvent(context.Background(), "s", func(ev Event) error {
			n++
			if !bytes.Equal(ev.Payload, fmt.Appendf(nil, `{"i":%d}`, n-1)) {
				t.Errorf("event %d payload %s", n, ev.Payload)
			}
			if n == 3 {
				return stop
			}
			return nil
		})
		if err != stop || n != 3 {
			t.Errorf("EachEvent = %v after %d events, want the callback's error after 3", err, n)
		}
	})
}

// rowBytes, the writer's encodeRow, stores what encodeRow stores below
// rawRowMin, and from there the payload itself (not a copy) unless a delta
// is smaller: every row it writes decodes to its payload.
func TestRowBytesAgreesWithEncodeRow(t *testing.T) {
	head := kindHead("agent_message_chunk")
	body := func(n int, c byte) []byte {
		return fmt.Appendf(nil, `%s"content":{"type":"text","text":"%s"}}`, head, bytes.Repeat([]byte{c}, n))
	}
	var prevs = [][]byte{nil, body(10, 'a'), body(rawRowMin, 'a'), body(3*rawRowMin, 'b'), []byte("other")}
	for _, n := range []int{0, 1, 100, rawRowMin - 80, rawRowMin - 60, rawRowMin, 3 * rawRowMin, 64 << 10} {
		for _, payload := range [][]byte{body(n, 'a'), body(n, 'b'), bytes.Repeat([]byte{'x'}, n)} {
			for _, prev := range prevs {
				wantForm, want := encodeRow(nil, payload, prev, head)
				form, stored, buf := rowBytes([]byte("junk"), payload, prev, head)
				got, err := decodeRow(nil, form, stored, prev, head)
				if err != nil || !bytes.Equal(got, payload) {
					t.Fatalf("%d bytes: form %d decodes to %d bytes, %v", len(payload), form, len(got), err)
				}
				switch {
				case len(payload) < rawRowMin || wantForm == formDelta:
					if form != wantForm || !bytes.Equal(stored, want) || string(buf[:4]) != "junk" || !bytes.Equal(buf[4:], want) {
						t.Fatalf("%d bytes: form %d %.20q, want encodeRow's %d %.20q", len(payload), form, stored, wantForm, want)
					}
				default:
					if form != formRaw || len(stored) == 0 || &stored[0] != &payload[0] || string(buf) != "junk" {
						t.Fatalf("%d bytes, encodeRow's form %d: rowBytes form %d, not the payload itself", len(payload), wantForm, form)
					}
				}
			}
		}
	}
}
