package acp

import (
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

var validSeeds = []string{
	``, ` `, `{}`, `[]`, `{ }`, `[ ]`, `""`, `"\u00e9\n\"\\\/\b\f\r\t"`, `"\u00e"`, `"\x"`, "\"\x01\"", "\"\xff\"",
	`0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e5`, `1E+5`, `1e-`, `-1.5e-3`, `.5`, `+1`, `true`, `tru`, `false`, `null`, `nul`,
	`{"a":1}`, `{"a" : [1, 2, {"b": null}]}`, `{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{1:2}`, `[1 2]`, `{"a":1 "b":2}`,
	`{"a":1}}`, `[[]]]`, `[[[]]`, "\t\n\r [1]\r\n", `[1] x`, `"a"  `, `{"a":"b"`, `[true,false,null]`,
	strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting),
	strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1),
	strings.Repeat(`{"a":`, maxNesting) + "1" + strings.Repeat("}", maxNesting),
	strings.Repeat(`{"a":`, maxNesting+1) + "1" + strings.Repeat("}", maxNesting+1),
}

// validJSON is json.Valid: on hand-picked lines, at the nesting limit,
// and on random strings of JSON's tokens.
func TestValidJSONIsJSONValid(t *testing.T) {
	cases := append([]string(nil), validSeeds...)
	for _, s := range fuzzSeeds {
		cases = append(cases, s)
	}
	tokens := []string{"{", "}", "[", "]", ",", ":", `"a"`, `"\n"`, `"\u12`, `"`, `\`, "1", "-", "0", ".", "e", "+",
		"true", "null", "f", " ", "\t", "\x00", "é"}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(tokens[r.IntN(len(tokens))])
		}
		cases = append(cases, b.String())
	}
	valid := 0
	for _, c := range cases {
		want := json.Valid([]byte(c))
		if got := validJSON([]byte(c)); got != want {
			t.Errorf("validJSON(%.80q) = %v, json.Valid: %v", c, got, want)
		}
		if want {
			valid++
		}
	}
	if valid < 500 {
		t.Errorf("only %d of the cases are valid JSON: the test checks little", valid)
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range append(validSeeds, fuzzSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid: %v", b, got, want)
		}
	})
}

// BenchmarkValidJSON: a streamed chunk's line (a 4 KiB text of 100-byte
// lines) checked by validJSON and by json.Valid.
func BenchmarkValidJSON(b *testing.B) {
	text, _ := json.Marshal(strings.Repeat(strings.Repeat("0123456789", 9)+"lorem ips\n", 41))
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":` + string(text) + `}}}}`)
	for name, valid := range map[string]func([]byte) bool{"validJSON": validJSON, "json.Valid": json.Valid} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for range b.N {
				if !valid(line) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// stopIn finds a byte of stringStop in a word exactly: each byte value at
// each place among plain bytes, and random words against the table.
func TestStopInIsTheTable(t *testing.T) {
	check := func(w [8]byte) {
		want := false
		for _, c := range w {
			want = want || stringStop[c]
		}
		if got := stopIn(binary.LittleEndian.Uint64(w[:])); got != want {
			t.Fatalf("stopIn(%q) = %v, want %v", w, got, want)
		}
	}
	for c := range 256 {
		for at := range 8 {
			for _, fill := range []byte{'a', 0xff, 0x80, '!', '#', '[', ']'} {
				var w [8]byte
				for i := range w {
					w[i] = fill
				}
				w[at] = byte(c)
				check(w)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		check(w)
	}
}
