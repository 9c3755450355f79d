package tui

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/acp"
)

func TestScrubJSONShowsControlsAsEscapes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text\n\twith a tab", "plain text\n\twith a tab"},
		{"esc \x1b]52;c;Zm9v\x07 end", `esc \x1b]52;c;Zm9v\x07 end`},
		{"rm -rf ~ \x1b[2K\rls", `rm -rf ~ \x1b[2K\x0dls`},
		{"crlf line\r\nnext", "crlf line\nnext"},
		{"back\bspace form\ffeed del\x7f", `back\x08space form\x0cfeed del\x7f`},
		{"c1 \u009b31m csi", `c1 \u009b31m csi`},
		{"bidi \u202eevil\u202c \u2066x\u2069 \u200f \u061c", `bidi \u202eevil\u202c \u2066x\u2069 \u200f \u061c`},
		{"kept: é — “quotes” ’ 日本 \u2028 🙂 <tag> & \\ \"", "kept: é — “quotes” ’ 日本 \u2028 🙂 <tag> & \\ \""},
		{"nul \x00 and \x1f", `nul \x00 and \x1f`},
	} {
		raw, _ := json.Marshal(map[string]any{"text": c.in, "list": []string{c.in}})
		out := scrubJSON(raw)
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
		if scrubText(c.in) != c.want {
			t.Errorf("scrubText(%q) = %q, want %q", c.in, scrubText(c.in), c.want)
		}
	}
}

// JSON escapes for controls in every spelling, and an escaped backslash
// before a u (text, not an escape) left alone.
func TestScrubJSONReadsEscapesAsTheDecoderDoes(t *testing.T) {
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
		if err := json.Unmarshal(scrubJSON([]byte(c.in)), &got); err != nil || got != c.want {
			t.Errorf("%s: got %q (%v), want %q", c.in, got, err, c.want)
		}
	}
}

// Clean JSON comes back as it was, not copied.
func TestScrubJSONCopiesNothingClean(t *testing.T) {
	raw := []byte(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"line\n\u003ccode\u003e é ’ —\n"}}}`)
	if out := scrubJSON(raw); &out[0] != &raw[0] || len(out) != len(raw) {
		t.Errorf("clean JSON was copied: %s", out)
	}
}

// A JSON-RPC error's message and data are scrubbed too.
func TestScrubErrorScrubsMessageAndData(t *testing.T) {
	err := scrubError(&acp.Error{Code: -32000, Message: "bad \x1b[2J", Data: map[string]any{"details": "x\x1b]0;t\x07"}})
	var e *acp.Error
	if !errors.As(err, &e) || e.Message != `bad \x1b[2J` || rpcMessage(err) != `bad \x1b[2J: x\x1b]0;t\x07` {
		t.Errorf("scrubError: %#v, rpcMessage %q", err, rpcMessage(err))
	}
}

func FuzzScrubJSON(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[2J", "a\r\nb\rc", "\u009b\u202e\u2066", "é—’🙂", `\u001b`, "\x00\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, _ := json.Marshal(s)
		var got string
		if err := json.Unmarshal(scrubJSON(raw), &got); err != nil {
			t.Fatalf("scrubbed %s: %v", raw, err)
		}
		var plain string // s as the decoder reads it back (invalid UTF-8 replaced)
		if err := json.Unmarshal(raw, &plain); err != nil {
			t.Fatal(err)
		}
		want := scrubText(plain)
		if got != want {
			t.Fatalf("scrubJSON(%q) decodes to %q; scrubText gives %q", raw, got, want)
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

// BenchmarkScrubJSONChunk4K: the check every chunk of a long answer
// pays, on a clean 4 KiB chunk of 100-byte lines (the 10 MB answer's).
func BenchmarkScrubJSONChunk4K(b *testing.B) {
	line := strings.Repeat("0123456789", 9) + "lorem ips\n"
	raw, _ := json.Marshal(map[string]any{"sessionId": "sess_1", "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": strings.Repeat(line, 41)}}})
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if out := scrubJSON(raw); len(out) != len(raw) {
			b.Fatal("changed")
		}
	}
}
