package acpserver

import (
	"encoding/json"
	"fmt"

	"github.com/corvid-agent/corvid/internal/acp"
)

// What one session/prompt may hold (docs/security.md, "Memory"). A frame
// may be up to 64 MiB, but a prompt is kept in memory several times on its
// way to the model (decoded, stored, sent), and a million tiny content
// blocks cost far more than their bytes: issue 29 saw a 50 MB prompt leave
// the process at 1.3 GiB and 1M blocks (29 MB) at 947 MiB. 16 MiB is
// beyond every model's context window in text, and above each provider's
// limit on one image; 1,024 blocks is far more than any editor attaches.
const (
	maxPromptBytes  = 16 << 20
	maxPromptBlocks = 1024
)

// checkRaw refuses, before anything is decoded, a session/prompt whose
// params are over maxPromptBytes or whose prompt (or Gas City's messages,
// or one message's content) has over maxPromptBlocks entries.
func (*PromptParams) checkRaw(raw json.RawMessage) error {
	if len(raw) > maxPromptBytes {
		return promptTooLarge(fmt.Sprintf("the params are %d bytes; a prompt may hold at most %d bytes (16 MiB) of JSON", len(raw), maxPromptBytes))
	}
	var peek struct {
		Prompt   rawSpan `json:"prompt"`
		Messages rawSpan `json:"messages"`
	}
	if json.Unmarshal(raw, &peek) != nil {
		return nil // the decode that follows says what is wrong
	}
	if n := countElements(peek.Prompt); n > maxPromptBlocks {
		return promptTooLarge(fmt.Sprintf("prompt has %d content blocks; a prompt may hold at most %d", n, maxPromptBlocks))
	}
	if n := countElements(peek.Messages); n > maxPromptBlocks {
		return promptTooLarge(fmt.Sprintf("messages has %d entries; a prompt may hold at most %d content blocks", n, maxPromptBlocks))
	}
	var msgs []struct {
		Content rawSpan `json:"content"`
	}
	if len(peek.Messages) > 0 && json.Unmarshal(peek.Messages, &msgs) == nil {
		total := 0
		for _, m := range msgs {
			total += countElements(m.Content)
		}
		if total > maxPromptBlocks {
			return promptTooLarge(fmt.Sprintf("messages hold %d content blocks; a prompt may hold at most %d", total, maxPromptBlocks))
		}
	}
	return nil
}

func promptTooLarge(details string) error {
	return acp.InvalidParams("Prompt too large", details+"; send large files as resource_link blocks, or fewer and smaller attachments")
}

// rawSpan is a JSON value kept as the bytes it was decoded from, without
// the copy json.RawMessage makes: only for peeking at params that outlive
// it.
type rawSpan []byte

func (r *rawSpan) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// countElements counts the elements of data when it is a JSON array (0
// for anything else), in one pass and without decoding them. data is
// valid JSON (json.Unmarshal checked it).
func countElements(data []byte) int {
	i := 0
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	if i == len(data) || data[i] != '[' {
		return 0
	}
	var sc elementScan
	for _, c := range data[i:] {
		sc.step(c)
	}
	if !sc.some {
		return 0
	}
	return sc.commas + 1
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// elementScan follows a JSON array byte by byte: the commas at its top
// level, and whether it holds anything at all.
type elementScan struct {
	depth, commas     int
	some              bool
	inString, escaped bool
}

func (sc *elementScan) step(c byte) {
	if sc.inString {
		switch {
		case sc.escaped:
			sc.escaped = false
		case c == '\\':
			sc.escaped = true
		case c == '"':
			sc.inString = false
		}
		return
	}
	switch {
	case isJSONSpace(c):
		return
	case c == '"':
		sc.inString = true
	case c == '[' || c == '{':
		sc.depth++
	case c == ']' || c == '}':
		sc.depth--
		if sc.depth == 0 {
			return
		}
	case c == ',' && sc.depth == 1:
		sc.commas++
		return
	}
	if sc.depth >= 1 && !(sc.depth == 1 && c == '[') {
		sc.some = true
	}
}
