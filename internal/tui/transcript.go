package tui

import (
	"encoding/json"
)

// shown is what of the session this screen has shown, by the ids the
// agent gave: the bytes of each message (by messageId) and the tool calls
// that ended. A re-attach after a dropped connection replays the whole
// session; filter passes only what is new, so the scrollback holds every
// message once even though the session was loaded twice.
type shown struct {
	text     map[string]int // bytes of each message shown, by messageId
	replayed map[string]int // bytes of each message the current replay has given
	ended    map[string]bool
}

func newShown() shown {
	return shown{text: map[string]int{}, replayed: map[string]int{}, ended: map[string]bool{}}
}

// startReplay begins a re-attach's replay.
func (s *shown) startReplay() { s.replayed = map[string]int{} }

// filter records an update as shown and, while rejoining, returns only its
// new part: a message's text beyond what was shown (cut at the byte the
// screen stopped at), a tool call that had not ended. A message without a
// messageId and a replayed user message cannot be matched with what the
// screen shows, so a rejoin leaves them out (the screen printed the user's
// own prompts; another client's prompt is not shown live either).
func (s *shown) filter(raw json.RawMessage, rejoining bool) (json.RawMessage, bool) {
	var u struct {
		SessionUpdate string `json:"sessionUpdate"`
		MessageID     string `json:"messageId"`
		ToolCallID    string `json:"toolCallId"`
		Status        string `json:"status"`
		Content       struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
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
		if u.MessageID == "" || u.SessionUpdate == "user_message_chunk" {
			return nil, false
		}
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
