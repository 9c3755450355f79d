package agent

import (
	"encoding/json"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/tool"
)

// EventKind is the closed set of things a session tells its front end. The
// values mirror ACP's sessionUpdate tags so that stored events read naturally,
// but nothing here depends on ACP.
type EventKind string

const (
	EventUserChunk     EventKind = "user_message_chunk"
	EventMessageChunk  EventKind = "agent_message_chunk"
	EventThoughtChunk  EventKind = "agent_thought_chunk"
	EventToolCall      EventKind = "tool_call"
	EventToolCallState EventKind = "tool_call_update"
	EventPlan          EventKind = "plan"
	EventUsage         EventKind = "usage_update"
	EventInfo          EventKind = "session_info_update"
	EventMode          EventKind = "current_mode_update"
	EventConfig        EventKind = "config_option_update"
	EventCommands      EventKind = "available_commands_update"
	// EventTurnEnded: a prompted turn ended (Stop, Tags.TurnID); shown,
	// never stored (Session.ShowAll, from the front end that ran it).
	EventTurnEnded EventKind = "turn_ended"
	// Kinds of corvid's own (eventtags.go): a front end spells each in its
	// host's dialect (ACP: a session_info_update with _meta).
	EventTeam         EventKind = "team_update"   // Tags.Team
	EventDrainStarted EventKind = "drain_started" // Tags.Drain
	EventDrainEnded   EventKind = "drain_ended"   // Tags.Drain
	// Live events: shown to a front end that takes them (LiveFrontEnd),
	// never stored, never replayed.
	EventNotice          EventKind = "notice"
	EventCompaction      EventKind = "compaction_update"
	EventCompactionChunk EventKind = "compaction_summary_chunk" // Content: a piece of the summary
)

// BlockType discriminates Block.
type BlockType string

const (
	BlockText         BlockType = "text"
	BlockImage        BlockType = "image"
	BlockAudio        BlockType = "audio"
	BlockResourceLink BlockType = "resource_link"
	BlockResource     BlockType = "resource"
)

// Block is one piece of user or agent content (a prompt block, a chunk).
type Block struct {
	Type     BlockType `json:"type"`
	Text     string    `json:"text,omitempty"`
	MimeType string    `json:"mimeType,omitempty"`
	Data     []byte    `json:"data,omitempty"` // image/audio bytes, or a blob resource
	URI      string    `json:"uri,omitempty"`
	Name     string    `json:"name,omitempty"`
	Title    string    `json:"title,omitempty"`
	// Blob marks an embedded resource whose content is Data, not Text.
	Blob bool `json:"blob,omitempty"`
	// TextJSON is set, in place of Text, in the events a session's replay
	// gives (SessionOptions.Replay): the text in wire form, the contents
	// of the JSON string json.Marshal writes for it without the quotes,
	// copied from the stored rows. TextLen is the text's length in bytes.
	// Decoded gives the block with Text.
	TextJSON string `json:"-"`
	TextLen  int    `json:"-"`
}

// text is the block's text in the form it holds it (Text or TextJSON).
func (b *Block) text() string {
	if b.TextJSON != "" {
		return b.TextJSON
	}
	return b.Text
}

// Decoded returns b with its text in Text (a copy when it was in
// TextJSON).
func (b *Block) Decoded() *Block {
	if b == nil || b.TextJSON == "" {
		return b
	}
	c := *b
	c.Text, c.TextJSON, c.TextLen = unescapeJSON(b.TextJSON), "", 0
	return &c
}

// ToolCall is the state of one tool call. In EventToolCall it is complete; in
// EventToolCallState only ID and the fields that changed are set.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name,omitempty"`
	Title     string          `json:"title,omitempty"`
	Kind      tool.Kind       `json:"kind,omitempty"`
	Status    ToolStatus      `json:"status,omitempty"`
	Content   []tool.Content  `json:"content,omitempty"`
	Locations []tool.Location `json:"locations,omitempty"`
	RawInput  json.RawMessage `json:"rawInput,omitempty"`
	RawOutput json.RawMessage `json:"rawOutput,omitempty"`
	// ParentID is the tool call this one runs under (a codeMode script's
	// call), set on EventToolCall only.
	ParentID string `json:"parentId,omitempty"`
	// AlwaysLabel names what "always allow" would remember for this call
	// (permission.AlwaysLabel); set on the call a permission request asks
	// about, never stored.
	AlwaysLabel string `json:"-"`
	// Member is the sub-agent whose call a permission request asks about;
	// never stored.
	Member *Member `json:"-"`
	// AnsweredBy is the client whose answer to a question about this
	// call (permission, ask_user, exit_plan, elicitation) counted, on the
	// update that follows the answer (Session.Answered); stored.
	AnsweredBy *Answerer `json:"answeredBy,omitempty"`
}

// Answerer names who answered a question: an ACP client's clientInfo
// from its initialize, or corvid respond.
type Answerer struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// ToolStatus is a tool call's lifecycle state.
type ToolStatus string

const (
	ToolPending    ToolStatus = "pending"
	ToolInProgress ToolStatus = "in_progress"
	ToolCompleted  ToolStatus = "completed"
	ToolFailed     ToolStatus = "failed"
)

// Usage is the context meter.
type Usage struct {
	Used    int64    `json:"used"`
	Size    int64    `json:"size"`
	CostUSD *float64 `json:"costUsd,omitempty"`
	// Tokens is the last response's usage as the provider reported it
	// (input without cache, output, cache reads and writes).
	Tokens *llm.Usage `json:"tokens,omitempty"`
}

// Event is one thing that happened in a session, in order.
type Event struct {
	Kind      EventKind        `json:"kind"`
	MessageID string           `json:"messageId,omitempty"`
	Content   *Block           `json:"content,omitempty"`
	ToolCall  *ToolCall        `json:"toolCall,omitempty"`
	Plan      []tool.PlanEntry `json:"plan,omitempty"`
	Usage     *Usage           `json:"usage,omitempty"`
	Title     string           `json:"title,omitempty"`
	UpdatedAt string           `json:"updatedAt,omitempty"`
	ModeID    string           `json:"modeId,omitempty"`
	Commands  []CommandInfo    `json:"commands,omitempty"`
	// Notice is what an EventNotice tells; Compaction is the compaction an
	// EventCompaction or EventCompactionChunk is about. Both are live only.
	Notice     *Notice     `json:"-"`
	Compaction *Compaction `json:"-"`
	// Stop is why the turn of an EventTurnEnded ended.
	Stop StopReason `json:"-"`
	// Tags are the typed facts beyond the kind (eventtags.go): the turn a
	// prompt opens, the sub-agent, the final output, a team change, a
	// drain turn. Stored inline, after the fields above.
	Tags
	// Stored, when set, makes the event durable (it waits for the commit
	// of its own row, not of rows recorded after it) and reports whether it
	// is: false once a store commit failed after it was recorded. A front
	// end asks it just before what reports the event leaves, so a client
	// never sees what a reload cannot show (nil: nothing to check).
	Stored func() bool `json:"-"`
	// TextWire, on a live text chunk, is Content.Text in wire form (as
	// Block.TextJSON holds a replayed one: what json.Marshal writes for
	// it, without the quotes). The event log escaped the text once for
	// the chunk's row (heldrow.go); a front end that writes JSON copies
	// this instead of escaping the text again. "" when the log did not
	// (a chunk not stored, of invalid UTF-8, or with tags beyond a turn
	// id).
	TextWire string `json:"-"`
	// Transient marks an event that is shown and never stored (a running
	// command's output so far, tool.Call.Live): a replay shows what
	// replaced it. It is the one exception to durable before visible; a
	// reload after a crash shows less of it than the client saw.
	Transient bool `json:"-"`
}

func textContent(s string) tool.Content { return tool.Content{Type: tool.ContentText, Text: s} }
