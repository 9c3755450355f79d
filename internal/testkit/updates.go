package testkit

import (
	"context"
	"encoding/json"
	"strings"
)

// ContentBlock is an ACP content block (text, image, audio, resource_link, resource).
type ContentBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	Data     string          `json:"data,omitempty"`
	MimeType string          `json:"mimeType,omitempty"`
	URI      string          `json:"uri,omitempty"`
	Name     string          `json:"name,omitempty"`
	Resource json.RawMessage `json:"resource,omitempty"`
}

// ToolCallContent is one entry of a tool call's content: content, diff or terminal.
type ToolCallContent struct {
	Type       string       `json:"type"`
	Content    ContentBlock `json:"content"`
	Path       string       `json:"path,omitempty"`
	OldText    *string      `json:"oldText,omitempty"`
	NewText    string       `json:"newText,omitempty"`
	TerminalID string       `json:"terminalId,omitempty"`
}

// Location is a tool call location.
type Location struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// Update is one session/update, decoded for assertions. Fields that do not apply to the
// update's kind are zero; Raw is the whole update object.
type Update struct {
	Seq           int // transcript index of the notification
	SessionID     string
	SessionUpdate string // agent_message_chunk, tool_call, …

	// Chunks (user_message_chunk, agent_message_chunk, agent_thought_chunk).
	MessageID string
	Content   ContentBlock

	// tool_call and tool_call_update.
	ToolCallID  string
	Title       string
	Kind        string
	Status      string
	ToolContent []ToolCallContent
	Locations   []Location
	RawInput    json.RawMessage
	RawOutput   json.RawMessage

	Raw json.RawMessage
}

func parseUpdate(m Message) (Update, bool) {
	var p struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.Update == nil {
		return Update{}, false
	}
	var f struct {
		SessionUpdate string          `json:"sessionUpdate"`
		MessageID     string          `json:"messageId"`
		Content       json.RawMessage `json:"content"`
		ToolCallID    string          `json:"toolCallId"`
		Title         string          `json:"title"`
		Kind          string          `json:"kind"`
		Status        string          `json:"status"`
		Locations     []Location      `json:"locations"`
		RawInput      json.RawMessage `json:"rawInput"`
		RawOutput     json.RawMessage `json:"rawOutput"`
	}
	if json.Unmarshal(p.Update, &f) != nil {
		return Update{}, false
	}
	u := Update{
		Seq: m.Seq, SessionID: p.SessionID, SessionUpdate: f.SessionUpdate,
		MessageID: f.MessageID, ToolCallID: f.ToolCallID, Title: f.Title, Kind: f.Kind,
		Status: f.Status, Locations: f.Locations, RawInput: f.RawInput, RawOutput: f.RawOutput,
		Raw: p.Update,
	}
	if len(f.Content) > 0 {
		switch f.Content[0] {
		case '{':
			_ = json.Unmarshal(f.Content, &u.Content)
		case '[':
			_ = json.Unmarshal(f.Content, &u.ToolContent)
		}
	}
	return u, true
}

// Updates returns every session/update for sessionID so far ("" = all sessions).
func (e *Editor) Updates(sessionID string) []Update {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Update
	for _, u := range e.updates {
		if sessionID == "" || u.SessionID == sessionID {
			out = append(out, u)
		}
	}
	return out
}

// WaitUpdate waits for an update that satisfies pred. It looks at updates after the one
// the previous WaitUpdate returned (already received ones included), so successive calls
// assert an order: pending, then in_progress, then completed.
func (e *Editor) WaitUpdate(ctx context.Context, pred func(Update) bool) (Update, error) {
	var got Update
	err := e.waitFor(ctx, func() bool {
		for i := e.updateCursor; i < len(e.updates); i++ {
			if pred(e.updates[i]) {
				got = e.updates[i]
				e.updateCursor = i + 1
				return true
			}
		}
		return false
	})
	return got, err
}

// Kind matches updates of the given sessionUpdate kind in the given session ("" = any).
func Kind(sessionID, kind string) func(Update) bool {
	return func(u Update) bool {
		return u.SessionUpdate == kind && (sessionID == "" || u.SessionID == sessionID)
	}
}

// TextOf concatenates the text of every chunk of the given kind (for example
// "agent_message_chunk").
func TextOf(updates []Update, kind string) string {
	var b strings.Builder
	for _, u := range updates {
		if u.SessionUpdate == kind && u.Content.Type == "text" {
			b.WriteString(u.Content.Text)
		}
	}
	return b.String()
}

// OfKind filters updates by sessionUpdate kind.
func OfKind(updates []Update, kind string) []Update {
	var out []Update
	for _, u := range updates {
		if u.SessionUpdate == kind {
			out = append(out, u)
		}
	}
	return out
}

// historyKinds are the updates a session/load replay is made of. The others
// (available commands, modes, config options, session info, usage) describe
// the session's live state and may follow a response.
var historyKinds = map[string]bool{
	"user_message_chunk": true, "agent_message_chunk": true, "agent_thought_chunk": true,
	"tool_call": true, "tool_call_update": true, "plan": true,
}

// History keeps the conversation-history updates of updates.
func History(updates []Update) []Update {
	var out []Update
	for _, u := range updates {
		if historyKinds[u.SessionUpdate] {
			out = append(out, u)
		}
	}
	return out
}

// IsHistory reports whether kind is part of a replayed conversation.
func IsHistory(kind string) bool { return historyKinds[kind] }
