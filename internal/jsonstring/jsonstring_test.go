package jsonstring

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzAppendMatchesEncodingJSON holds the escaper (eight bytes at a
// time where nothing needs an escape) to encoding/json's output, with HTML
// escaping on (json.Marshal's default) and off, at every offset of the
// words it reads.
func FuzzAppendMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "x", "hello, world", `quote " and backslash \ and slash /`, "tab\tnew\nline\rcr",
		"\x00\x01\x1f\x7f", "<b>&amp;</b>", "héllo wörld ✓ 日本語", "\u2028\u2029", "bad \xff\xfe utf8", "cut \xe2\x82",
		strings.Repeat(strings.Repeat("0123456789", 9)+"lorem ips\n", 41)} {
		f.Add(s)
	}
	f.Add("0123456<89abcdef\x7f\x80ü\u2028\u2029\xff&>\"\\\x1f ")
	f.Fuzz(func(t *testing.T, text string) {
		for off := 0; off < 8 && off <= len(text); off++ {
			s := text[off:]
			html, _ := json.Marshal(s)
			var plain bytes.Buffer
			enc := json.NewEncoder(&plain)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s)
			if got := Append(nil, s, true); !bytes.Equal(got, html) {
				t.Fatalf("%q with html:\ngot  %s\nwant %s", s, got, html)
			}
			if got, want := Append([]byte("x"), s, false), append([]byte("x"), bytes.TrimSuffix(plain.Bytes(), []byte("\n"))...); !bytes.Equal(got, want) {
				t.Fatalf("%q:\ngot  %s\nwant %s", s, got, want)
			}
			if _, valid := AppendContents(nil, s, true); valid != utf8.ValidString(s) {
				t.Fatalf("%q: valid %v", s, valid)
			}
		}
	})
}

// TestUnescapedRunFindsEveryByteThatNeedsAnEscape: each byte value, at
// each place of a word of plain text, stops the run at that word exactly
// when it is one the escaper must look at.
func TestUnescapedRunFindsEveryByteThatNeedsAnEscape(t *testing.T) {
	for _, html := range []bool{false, true} {
		for c := range 256 {
			b := byte(c)
			special := b >= utf8.RuneSelf || !plainASCII(b, html)
			for at := range 16 {
				buf := []byte(strings.Repeat("a", 16))
				buf[at] = b
				got := unescapedRun(string(buf), 0, html)
				want := 16
				if special {
					want = at &^ 7
				}
				if got != want {
					t.Errorf("byte %#x at %d (html %v): run ends at %d, want %d", b, at, html, got, want)
				}
			}
		}
	}
}

// BenchmarkAppend4K escapes one 4 KiB chunk of a long answer
// (lines of 100 bytes) as a text chunk's frame does.
func BenchmarkAppend4K(b *testing.B) {
	text := strings.Repeat(strings.Repeat("0123456789", 9)+"lorem ips\n", 41)[:4096]
	buf := make([]byte, 0, 8192)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		buf = Append(buf[:0], text, true)
	}
}
