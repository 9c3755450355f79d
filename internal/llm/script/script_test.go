package script

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
)

// repeatCut is how a repeated text was streamed before pieces: the whole
// repeated text built first, then cut into pieces of chunk runes.
func repeatCut(text string, repeat, chunk int) []string {
	var out []string
	rest := strings.Repeat(text, max(repeat, 1))
	for len(rest) > 0 {
		piece := cut(rest, chunk)
		rest = rest[len(piece):]
		out = append(out, piece)
	}
	return out
}

func TestPiecesMatchRepeatThenCut(t *testing.T) {
	texts := []string{
		"x", "ab", "héllo", "世界", "🙂a→", "e\u0301", "a🙂b世c", "hi there, wörld 🙂\n",
		// Not UTF-8: a rune made of one copy's tail and the next one's head.
		"\x82\xac\xe2", "\xff", "a\xe2\x82",
	}
	repeats := []int{0, 1, 2, 3, 7, 50}
	chunks := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 17, 64, 1 << 30}
	for _, text := range texts {
		for _, repeat := range repeats {
			for _, chunk := range chunks {
				want := repeatCut(text, repeat, chunk)
				got := slices.Collect(pieces(text, repeat, chunk))
				if !slices.Equal(got, want) {
					t.Fatalf("pieces(%q, %d, %d) = %q, want %q", text, repeat, chunk, got, want)
				}
			}
		}
	}
}

func TestPiecesStopWhenAsked(t *testing.T) {
	var got []string
	for p := range pieces("abc", 1000, 2) {
		got = append(got, p)
		if len(got) == 3 {
			break
		}
	}
	if want := []string{"ab", "ca", "bc"}; !slices.Equal(got, want) {
		t.Fatalf("first pieces = %q, want %q", got, want)
	}
}

// The first piece of a huge repeat costs what the piece does, not what the
// whole answer would.
func TestFirstPieceDoesNotBuildTheWholeText(t *testing.T) {
	const repeat = 20 << 20 // 20 MB of text
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var first string
	for p := range pieces("x", repeat, 1) {
		first = p
		break
	}
	runtime.ReadMemStats(&after)
	if first != "x" {
		t.Fatalf("first piece %q", first)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("the first piece of a %d-byte answer allocated %d bytes", repeat, n)
	}
}

// A scripted response streams its repeated text as chunks of chunkSize
// runes that add up to the whole text.
func TestStreamRepeatedText(t *testing.T) {
	s, err := Parse([]byte(`{"responses":[{"chunkSize":3,"parts":[{"type":"text","text":"ab🙂","repeat":1000}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	n := 0
	for ev, err := range NewModel(s, "t").Stream(context.Background(), llm.Request{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.EventTextDelta {
			if got := len([]rune(ev.Text)); got != 3 {
				t.Fatalf("chunk %d has %d runes: %q", n, got, ev.Text)
			}
			text.WriteString(ev.Text)
			n++
		}
	}
	if want := strings.Repeat("ab🙂", 1000); text.String() != want || n != 1000 {
		t.Fatalf("%d chunks, text of %d bytes; want 1000 chunks and %d bytes", n, text.Len(), len(want))
	}
}

func ExampleModel_Stream() {
	s, _ := Parse([]byte(`{"responses":[{"chunkSize":2,"parts":[{"type":"text","text":"abc","repeat":2}]}]}`))
	for ev := range NewModel(s, "example").Stream(context.Background(), llm.Request{}) {
		if ev.Type == llm.EventTextDelta {
			fmt.Printf("%q ", ev.Text)
		}
	}
	// Output: "ab" "ca" "bc"
}
