package acpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/tool"
)

// Gas City's ACP client (gastownhall/gascity, internal/runtime/acp) predates
// parts of the spec, in two shapes that both prompt with
//
//	{"sessionId": …, "messages": [{"role": "user", "content": [blocks]}]}
//
// instead of "prompt", read the text of every session/update from a
// top-level params.content array of content blocks (dropping an update whose
// content is not an array), and never answer an agent→client request (its
// dispatch routes only session/update notifications and responses). The
// newer of the two still advertises fs and terminal as true. So a connection
// that prompts with messages is served this way from then on:
//
//   - each session/update that carries text also gets a top-level content
//     array beside the standard update (see messagesNotification); live
//     agent text there is line-buffered (gascitylines.go);
//   - permission questions go out of band (corvid respond), never as
//     session/request_permission;
//   - files and shell run in-process whatever the client advertised.
//
// Connections that prompt with "prompt" never see any of this: their frames
// stay schema-exact.

// PromptParams is session/prompt's params with Gas City's alternative.
type PromptParams struct {
	acp.PromptRequest
	Messages json.RawMessage `json:"messages"`
}

// promptMessage is one entry of Gas City's messages array. Content is a
// string or an array of content blocks.
type promptMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// missingPrompt is the -32602 for a session/prompt with neither field.
func missingPrompt() error {
	return acp.InvalidParams("Invalid params", `prompt is required: an array of content blocks, e.g. "prompt": [{"type": "text", "text": "…"}] (Gas City's "messages": [{"role": "user", "content": …}] is accepted too)`)
}

// blocksFromMessages returns the content of the user messages, in order, as
// prompt blocks; a string content is one text block.
func blocksFromMessages(raw json.RawMessage) ([]acp.ContentBlock, error) {
	var msgs []promptMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, acp.InvalidParams("Invalid params", `messages must be an array of {"role", "content"} objects`)
	}
	var out []acp.ContentBlock
	users := 0
	for i, m := range msgs {
		if m.Role != "user" {
			continue
		}
		users++
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			out = append(out, acp.TextBlock(text))
			continue
		}
		var blocks []acp.ContentBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return nil, acp.InvalidParams("Invalid params", fmt.Sprintf("messages[%d].content must be a string or an array of content blocks", i))
		}
		out = append(out, blocks...)
	}
	if users == 0 {
		return nil, acp.InvalidParams("Invalid params", `messages has no message with role "user"; the prompt is the user's content`)
	}
	if out == nil {
		out = []acp.ContentBlock{}
	}
	return out, nil
}

// messagesNotification is session/update for a connection that prompts
// with messages: the standard notification plus the text as a top-level
// content array, which is where Gas City reads it.
type messagesNotification struct {
	SessionID string             `json:"sessionId"`
	Update    any                `json:"update"`
	Content   []acp.ContentBlock `json:"content,omitempty"`
}

// notification wraps update for this connection.
func (s *Server) notification(sessionID string, u any) any {
	if s.messagesHost.Load() {
		if c, ok := u.(acp.ContentChunk); ok && c.Content.Type == "text" && c.SessionUpdate != string(agent.EventThoughtChunk) {
			return messagesNotification{SessionID: sessionID, Update: u, Content: []acp.ContentBlock{c.Content}}
		}
	}
	return acp.SessionNotification{SessionID: sessionID, Update: u}
}

// cannotAnswer reports whether the client cannot answer agent→client
// requests: it sent no clientCapabilities at all, or it prompts with
// messages (both Gas City shapes).
func (s *Server) cannotAnswer() bool {
	if s.messagesHost.Load() {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientCaps == nil
}

// InterruptTurns cancels every running turn on this connection and keeps
// serving (what Gas City's Interrupt, a SIGINT to the process group, means).
// It returns how many sessions it cancelled.
func (s *Server) InterruptTurns() int {
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		if ss.Session != nil {
			all = append(all, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.Cancel()
	}
	return len(all)
}

// switchTerminals runs commands in the client's terminals until the
// connection turns out to be one that never answers (local from then on).
type switchTerminals struct {
	client   *clientTerminals
	local    *tool.LocalTerminals
	useLocal func() bool

	mu       sync.Mutex
	localIDs map[string]bool
}

func (t *switchTerminals) pick(id string) tool.Terminals {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.localIDs[id] {
		return t.local
	}
	return t.client
}

func (t *switchTerminals) Embedded() bool { return !t.useLocal() }

func (t *switchTerminals) Create(ctx context.Context, req tool.TerminalRequest) (string, error) {
	if !t.useLocal() {
		return t.client.Create(ctx, req)
	}
	id, err := t.local.Create(ctx, req)
	if err == nil {
		t.mu.Lock()
		t.localIDs[id] = true
		t.mu.Unlock()
	}
	return id, err
}

func (t *switchTerminals) Output(ctx context.Context, id string) (tool.TerminalOutput, error) {
	return t.pick(id).Output(ctx, id)
}

func (t *switchTerminals) WaitForExit(ctx context.Context, id string) (tool.ExitStatus, error) {
	return t.pick(id).WaitForExit(ctx, id)
}

func (t *switchTerminals) Kill(ctx context.Context, id string) error {
	return t.pick(id).Kill(ctx, id)
}

func (t *switchTerminals) Release(ctx context.Context, id string) error {
	return t.pick(id).Release(ctx, id)
}

// Close frees the in-process terminals (the session closes its backend).
func (t *switchTerminals) Close() error { return t.local.Close() }
