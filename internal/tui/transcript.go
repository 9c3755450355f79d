package tui

import (
	"encoding/json"
	"slices"
	"strings"
)

// shown is what of the session this screen has shown, by the ids the
// agent gave: the bytes of each message (by messageId) and the tool calls
// that ended. A re-attach after a dropped connection replays the whole
// session; filter passes only what is new, so the scrollback holds every
// message once even though the session was loaded twice.
//
// The screen's own prompts never come back live (ACP does not echo a
// prompt): the screen printed them itself, and knows them in a replay by
// their text, in the order it sent them.
type shown struct {
	text     map[string]int // bytes of each message shown, by messageId
	replayed map[string]int // bytes of each message the current replay has given
	ended    map[string]bool
	// pending are the texts of this screen's prompts no replay has given
	// yet, in order; ownMsgs the messageIds of the user messages a replay
	// matched with them.
	pending []string
	ownMsgs map[string]bool
}

func newShown() shown {
	return shown{text: map[string]int{}, replayed: map[string]int{}, ended: map[string]bool{}, ownMsgs: map[string]bool{}}
}

// startReplay begins a re-attach's replay.
func (s *shown) startReplay() { s.replayed = map[string]int{} }

// prompted records a prompt this screen sends.
func (s *shown) prompted(text string) { s.pending = append(s.pending, text) }

// refused forgets a prompt the agent refused before recording it (a turn
// was already running): no replay will give it.
func (s *shown) refused(text string) {
	if i := slices.Index(s.pending, text); i >= 0 {
		s.pending = slices.Delete(s.pending, i, i+1)
	}
}

// replayUpdate is what filter reads of a session/update.
type replayUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	MessageID     string `json:"messageId"`
	ToolCallID    string `json:"toolCallId"`
	Status        string `json:"status"`
	Content       struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// filter records an update as shown and, while rejoining, returns only its
// new part: a message's text beyond what was shown (cut at the byte the
// screen stopped at), a tool call that had not ended. A user message is
// left out when it is one of this screen's own prompts (printed when it
// was sent); another client's prompt is a message like the others: shown
// if it came while the screen was cut off, not again if it came live. A
// message without a messageId cannot be matched with what the screen
// shows, so a rejoin leaves it out (corvid gives every chunk one).
func (s *shown) filter(raw json.RawMessage, rejoining bool) (json.RawMessage, bool) {
	var u replayUpdate
	if json.Unmarshal(raw, &u) != nil {
		return raw, !rejoining
	}
	switch u.SessionUpdate {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		if !rejoining {
			if u.MessageID != "" {
				s.text[u.MessageID] += chunkLen(u.Content.Type, u.Content.Text)
			}
			return raw, true
		}
		if u.MessageID == "" || u.SessionUpdate == "user_message_chunk" && s.own(&u) {
			return nil, false
		}
		return s.newPart(raw, &u)
	case "tool_call", "tool_call_update":
		if rejoining && s.ended[u.ToolCallID] {
			return nil, false
		}
		if u.Status == "completed" || u.Status == "failed" {
			s.ended[u.ToolCallID] = true
		}
	}
	return raw, true
}

// newPart is what of a replayed message chunk the screen has not shown.
func (s *shown) newPart(raw json.RawMessage, u *replayUpdate) (json.RawMessage, bool) {
	n := chunkLen(u.Content.Type, u.Content.Text)
	from := s.replayed[u.MessageID]
	s.replayed[u.MessageID] = from + n
	seen := s.text[u.MessageID]
	if from+n <= seen {
		return nil, false
	}
	s.text[u.MessageID] = from + n
	if seen <= from {
		return raw, true
	}
	if u.Content.Type != "text" {
		return nil, false
	}
	return withText(raw, u.Content.Text[seen-from:])
}

// longPiece is the shortest first piece of a long prompt's text a replay
// may send: corvid cuts a text over 64 KiB into pieces of 64 KiB.
const longPiece = 32 << 10

// own tells whether a replayed user chunk is of one of this screen's
// prompts: the first of them not yet replayed whose text is the chunk's
// (the whole of it, or a long prompt's first piece). A message the screen
// showed (another client's, live) is not. Another client's prompt sent
// while the screen was cut off comes after all of this screen's: those
// were matched first.
func (s *shown) own(u *replayUpdate) bool {
	if s.ownMsgs[u.MessageID] {
		return true
	}
	if s.text[u.MessageID] > 0 || s.replayed[u.MessageID] > 0 {
		return false
	}
	if u.Content.Type != "text" || u.Content.Text == "" {
		return false
	}
	t := u.Content.Text
	for i, p := range s.pending {
		if p == t || len(t) >= longPiece && strings.HasPrefix(p, t) {
			s.pending = slices.Delete(s.pending, i, i+1)
			s.ownMsgs[u.MessageID] = true
			return true
		}
	}
	return false
}

// chunkLen is how much of a message a chunk is: its text's bytes, or one
// for a block that is not text.
func chunkLen(typ, text string) int {
	if typ == "text" {
		return len(text)
	}
	return 1
}

// withText is a content chunk with its text replaced.
func withText(raw json.RawMessage, text string) (json.RawMessage, bool) {
	var u map[string]any
	if json.Unmarshal(raw, &u) != nil {
		return nil, false
	}
	c, _ := u["content"].(map[string]any)
	if c == nil {
		return nil, false
	}
	c["text"] = text
	b, err := json.Marshal(u)
	if err != nil {
		return nil, false
	}
	return b, true
}
