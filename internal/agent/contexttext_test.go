package agent

import (
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
)

// A long text of the model context is stored in rows of at most
// maxContextText bytes, cut between runes, and folded back whole; a piece
// whose context row never came (a crash) is dropped.
func TestLongContextTextIsStoredInPiecesAndFoldedBackWhole(t *testing.T) {
	st := storeWithSession(t, "")
	l := &eventLog{id: "s1", store: st}
	long := strings.Repeat("é", maxContextText) + "end" // 2 bytes a rune: cuts fall mid-rune
	m := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		{Type: llm.PartThinking, Text: "short"}, {Type: llm.PartText, Text: long}}}
	l.context(m)
	// A cut-off write: pieces with no context row after them.
	l.mu.Lock()
	l.appendLocked(recordContextText, contextTextRecord{Part: 0, Text: "orphan"})
	l.mu.Unlock()
	l.context(llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("next")}})
	rows, err := st.Events(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	pieces := 0
	for _, r := range rows {
		if len(r.Payload) > maxContextText+64 {
			t.Errorf("a %s row of %d bytes", r.Kind, len(r.Payload))
		}
		if r.Kind == recordContextText {
			pieces++
		}
	}
	if pieces != 4 { // three of the long text, one orphan
		t.Errorf("%d context_text rows, want 4", pieces)
	}
	if m.Parts[1].Text != long {
		t.Error("recording changed the caller's message")
	}
	h := Fold(rows).History
	if len(h) != 2 || len(h[0].Parts) != 2 || h[0].Parts[0].Text != "short" || h[0].Parts[1].Text != long {
		t.Fatalf("folded history: %d messages; first %.80v", len(h), h)
	}
	if h[1].Parts[0].Text != "next" {
		t.Errorf("the orphan piece went into %q", h[1].Parts[0].Text)
	}
}

// textBuf gives back what was written, across blocks.
func TestTextBufGivesBackTheTextAcrossBlocks(t *testing.T) {
	var b textBuf
	var want strings.Builder
	for i := range 5000 {
		s := strings.Repeat(string(rune('a'+i%26)), i%97)
		b.WriteString(s)
		want.WriteString(s)
	}
	if b.Len() != want.Len() || b.take() != want.String() {
		t.Fatalf("textBuf: %d bytes, want %d", b.Len(), want.Len())
	}
}

// A long prompt text is recorded in bounded rows and replayed as the one
// text the user sent.
func TestLongPromptTextIsStoredInPiecesAndReplayedWhole(t *testing.T) {
	st := storeWithSession(t, "")
	c := newConversation("s1", st, nil, nil)
	long := strings.Repeat("ü", maxContextText) + "!"
	c.recordPrompt([]Block{{Type: BlockText, Text: "look:"}, {Type: BlockText, Text: long}}, "", nil)
	c.log.close()
	rows, err := st.Events(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 { // "look:", then the long text in three rows
		t.Errorf("%d rows, want 4", len(rows))
	}
	for _, r := range rows {
		if len(r.Payload) > maxContextText+256 {
			t.Errorf("a %s row of %d bytes", r.Kind, len(r.Payload))
		}
	}
	e := Fold(rows).Entries()
	if len(e) != 1 || e[0].Content.Text != "look:"+long {
		t.Fatalf("replay: %d entries", len(e))
	}
}
