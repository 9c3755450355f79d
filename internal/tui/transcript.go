package tui

import (
	"encoding/json"
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
// their turn id (`_meta["codebuddy.ai/conversationRequestId"]`, which
// corvid puts on a prompt's answer and on every replayed user chunk), or,
// for a prompt whose answer the drop cut off, by its text.
type shown struct {
	text     map[string]int // bytes of each message shown, by messageId
	replayed map[string]int // bytes of each message the current replay has given
	ended    map[string]bool
	// ownTurns are the turn ids of this screen's prompts; ownMsgs the
	// messageIds of the user messages a replay matched with them.
	ownTurns map[string]bool
	ownMsgs  map[string]bool
	// pending are the texts of this screen's prompts whose turn id is not
	// known yet (answer still to come, or cut off by a drop), in order.
	pending []string
}

func newShown() shown {
	return shown{text: map[string]int{}, replayed: map[string]int{}, ended: map[string]bool{},
		ownTurns: map[string]bool{}, ownMsgs: map[string]bool{}}
}

// startReplay begins a re-attach's replay.
func (s *shown) startReplay() { s.replayed = map[string]int{} }

// prompted records a prompt this screen sends.
func (s *shown) prompted(text string) { s.pending = append(s.pending, text) }

// answered records the turn id the answer to the prompt text carried; an
// answer without one (an error, another server) leaves the prompt to be
// known by its text.
func (s *shown) answered(text, turn string) {
	if turn == "" {
		return
	}
	s.ownTurns[turn] = true
	for i, p := range s.pending {
		if p == text {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return
		}
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
	Meta struct {
		Turn string `json:"codebuddy.ai/conversationRequestId"`
	} `json:"_meta"`
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

// metaTurn is the _meta key of a turn's id on corvid's prompt answers
// and replayed updates.
const metaTurn = "codebuddy.ai/conversationRequestId"

// longPiece is the shortest first piece of a long prompt's text a replay
// may send: corvid cuts a text over 64 KiB into pieces of 64 KiB.
const longPiece = 32 << 10

// own tells whether a replayed user chunk is of one of this screen's
// prompts: by its turn id, or, for a prompt whose turn id never came (the
// drop cut its answer off), by its text (the whole of it, or a long
// prompt's first piece); the first such prompt is the one. A message the
// screen showed (another client's, live) is not.
func (s *shown) own(u *replayUpdate) bool {
	if s.ownMsgs[u.MessageID] {
		return true
	}
	if s.text[u.MessageID] > 0 || s.replayed[u.MessageID] > 0 {
		return false
	}
	if u.Meta.Turn != "" && s.ownTurns[u.Meta.Turn] {
		s.ownMsgs[u.MessageID] = true
		return true
	}
	if u.Content.Type != "text" || u.Content.Text == "" {
		return false
	}
	t := u.Content.Text
	for i, p := range s.pending {
		if p == t || len(t) >= longPiece && strings.HasPrefix(p, t) {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			s.ownMsgs[u.MessageID] = true
			if u.Meta.Turn != "" {
				s.ownTurns[u.Meta.Turn] = true
			}
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
