package termsafe

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestJSONShowsControlsAsEscapes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text\n\twith a tab", "plain text\n\twith a tab"},
		{"esc \x1b]52;c;Zm9v\x07 end", `esc \x1b]52;c;Zm9v\x07 end`},
		{"rm -rf ~ \x1b[2K\rls", `rm -rf ~ \x1b[2K\x0dls`},
		{"crlf line\r\nnext", "crlf line\nnext"},
		{"back\bspace form\ffeed del\x7f", `back\x08space form\x0cfeed del\u007f`},
		{"c1 \u009b31m csi", `c1 \u009b31m csi`},
		{"bidi \u202eevil\u202c \u2066x\u2069 \u200f \u061c", `bidi \u202eevil\u202c \u2066x\u2069 \u200f \u061c`},
		{"kept: é — “quotes” ’ 日本 \u2028 🙂 <tag> & \\ \"", "kept: é — “quotes” ’ 日本 \u2028 🙂 <tag> & \\ \""},
		{"nul \x00 and \x1f", `nul \x00 and \x1f`},
	} {
		raw, _ := json.Marshal(map[string]any{"text": c.in, "list": []string{c.in}})
		out := JSON(raw)
		var got struct {
			Text string   `json:"text"`
			List []string `json:"list"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q: scrubbed JSON %s: %v", c.in, out, err)
		}
		if got.Text != c.want || got.List[0] != c.want {
			t.Errorf("%q: got %q, %q; want %q", c.in, got.Text, got.List[0], c.want)
		}
		if String(c.in) != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, String(c.in), c.want)
		}
	}
}

// JSON escapes for controls in every spelling, and an escaped backslash
// before a u (text, not an escape) left alone.
func TestJSONReadsEscapesAsTheDecoderDoes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`"\u001b[31m"`, `\x1b[31m`},
		{`"\u001B[31m"`, `\x1b[31m`},
		{`"\u009B"`, `\u009b`},
		{`"\u202E"`, `\u202e`},
		{`"\\u001b"`, `\u001b`},
		{`"\\\u001b"`, `\\x1b`},
		{`"a\r\nb"`, "a\nb"},
		{`"a\u000d\u000ab"`, "a\\x0d\nb"},
		{`"\u00e9\u003c\ud83d\ude42"`, "é<🙂"},
		{`"\n\t\"\/"`, "\n\t\"/"},
	} {
		var got string
		if err := json.Unmarshal(JSON([]byte(c.in)), &got); err != nil || got != c.want {
			t.Errorf("%s: got %q (%v), want %q", c.in, got, err, c.want)
		}
	}
}

// Clean JSON comes back as it was, not copied.
func TestJSONCopiesNothingClean(t *testing.T) {
	raw := []byte(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"line\n\u003ccode\u003e é ’ —\n"}}}`)
	if out := JSON(raw); &out[0] != &raw[0] || len(out) != len(raw) {
		t.Errorf("clean JSON was copied: %s", out)
	}
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[2J", "a\r\nb\rc", "\u009b\u202e\u2066", "é—’🙂", `\u001b`, "\x00\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, _ := json.Marshal(s)
		var got string
		if err := json.Unmarshal(JSON(raw), &got); err != nil {
			t.Fatalf("scrubbed %s: %v", raw, err)
		}
		var plain string // s as the decoder reads it back (invalid UTF-8 replaced)
		if err := json.Unmarshal(raw, &plain); err != nil {
			t.Fatal(err)
		}
		want := String(plain)
		if got != want {
			t.Fatalf("JSON(%q) decodes to %q; String gives %q", raw, got, want)
		}
		for _, r := range got {
			if (r < 0x20 && r != '\n' && r != '\t') || hidden(r) {
				t.Fatalf("scrubbed %q still holds %U", s, r)
			}
		}
		if !utf8.ValidString(got) {
			t.Fatalf("not UTF-8: %q", got)
		}
	})
}

// BenchmarkJSONChunk4K: the check every chunk of a long answer
// pays, on a clean 4 KiB chunk of 100-byte lines (the 10 MB answer's).
func BenchmarkJSONChunk4K(b *testing.B) {
	line := strings.Repeat("0123456789", 9) + "lorem ips\n"
	raw, _ := json.Marshal(map[string]any{"sessionId": "sess_1", "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": strings.Repeat(line, 41)}}})
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if out := JSON(raw); len(out) != len(raw) {
			b.Fatal("changed")
		}
	}
}

// String escapes bytes that are not UTF-8 (a lone 0x9b is CSI to an
// 8-bit terminal) and keeps U+FFFD.
func TestStringEscapesBytesThatAreNotUTF8(t *testing.T) {
	if got := String("a\x9b2Jb \xff\ufffd"); got != `a\x9b2Jb \xff`+"\ufffd" {
		t.Errorf("got %q", got)
	}
}

// The Writer writes what String would, whatever the cuts between
// writes: a character, an escape or a CRLF split in two.
func TestWriterIsStringWhateverTheCuts(t *testing.T) {
	text := "one\r\ntwo \x1b]52;c;eA==\x07 é—🙂 \u202e end\r\n\u009b1m last\r"
	want := String(text)
	for size := 1; size <= len(text); size++ {
		var out strings.Builder
		w := NewWriter(&out)
		for i := 0; i < len(text); i += size {
			n, err := w.Write([]byte(text[i:min(i+size, len(text))]))
			if err != nil || n != min(size, len(text)-i) {
				t.Fatalf("size %d: Write = %d, %v", size, n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("writes of %d bytes: %q, want %q", size, out.String(), want)
		}
	}
}

func FuzzWriter(f *testing.F) {
	f.Add("a\r\nb\x1b[2J\u202e", uint8(3))
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		var out strings.Builder
		w := NewWriter(&out)
		size := int(cut%16) + 1
		for i := 0; i < len(s); i += size {
			_, _ = w.Write([]byte(s[i:min(i+size, len(s))]))
		}
		_ = w.Flush()
		if out.String() != String(s) {
			t.Fatalf("%q in writes of %d: %q, want %q", s, size, out.String(), String(s))
		}
	})
}

// clean agrees with String byte for byte: it says clean exactly when
// String changes nothing.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"plain\n\ttext", "a\rb", "\x1b", "é—’", "\u202e", "\xff", "12345678\x01", "\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := clean([]byte(s)), String(s) == s; got != want {
			t.Fatalf("clean(%q) = %v, String changes it: %v", s, got, !want)
		}
	})
}

// BenchmarkWriter10MB: run -p's answer to a terminal, 100-byte lines
// in 4 KiB writes.
func BenchmarkWriter10MB(b *testing.B) {
	line := strings.Repeat("0123456789", 9) + "lorem ips\n"
	chunk := []byte(strings.Repeat(line, 41))
	b.SetBytes(int64(len(chunk)) * 2500)
	for b.Loop() {
		w := NewWriter(io.Discard)
		for range 2500 {
			_, _ = w.Write(chunk)
		}
		_ = w.Flush()
	}
}
