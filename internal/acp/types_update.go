package acp

import "encoding/json"

// SessionNotification is the params of session/update.
type SessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

// ContentChunk is user_message_chunk, agent_message_chunk, agent_thought_chunk.
type ContentChunk struct {
	SessionUpdate string       `json:"sessionUpdate"`
	Content       ContentBlock `json:"content"`
	MessageID     string       `json:"messageId,omitempty"`
	Meta          Meta         `json:"_meta,omitempty"`
}

// ToolCallUpdate is tool_call (all of Title required) and tool_call_update
// (only what changed), and the toolCall of a permission request.
type ToolCallUpdate struct {
	SessionUpdate string             `json:"sessionUpdate,omitempty"`
	ToolCallID    string             `json:"toolCallId"`
	Name          string             `json:"name,omitempty"` // the tool's programmatic name
	Title         string             `json:"title,omitempty"`
	Kind          string             `json:"kind,omitempty"`
	Status        string             `json:"status,omitempty"`
	Content       []ToolCallContent  `json:"content,omitempty"`
	Locations     []ToolCallLocation `json:"locations,omitempty"`
	RawInput      json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput     json.RawMessage    `json:"rawOutput,omitempty"`
	Meta          Meta               `json:"_meta,omitempty"`
}

// MarshalJSON always sends title on a tool_call, where it is required.
func (u ToolCallUpdate) MarshalJSON() ([]byte, error) {
	type plain ToolCallUpdate
	if u.SessionUpdate == "tool_call" {
		return json.Marshal(struct {
			plain
			Title string `json:"title"`
		}{plain(u), u.Title})
	}
	return json.Marshal(plain(u))
}

// NoticeUpdate is notice: live information for the user, sent only to
// clients that advertise session.notices (ClientCapabilities.Notices).
type NoticeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Severity      string `json:"severity"` // info, warning, error
	Title         string `json:"title"`    // non-empty
	Description   string `json:"description,omitempty"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// CompactionUpdate is compaction_update, sent only to clients that
// advertise session.compaction (ClientCapabilities.Compaction). Summary and
// Error are patches: omitted leaves what the client holds.
type CompactionUpdate struct {
	SessionUpdate string         `json:"sessionUpdate"`
	CompactionID  string         `json:"compactionId"`
	Status        string         `json:"status"` // in_progress, completed, failed, cancelled
	Summary       []ContentBlock `json:"summary,omitempty"`
	Error         string         `json:"error,omitempty"`
	Meta          Meta           `json:"_meta,omitempty"`
}

// CompactionSummaryChunk is compaction_summary_chunk: one block appended to
// a compaction's summary.
type CompactionSummaryChunk struct {
	SessionUpdate string       `json:"sessionUpdate"`
	CompactionID  string       `json:"compactionId"`
	Content       ContentBlock `json:"content"`
	Meta          Meta         `json:"_meta,omitempty"`
}

// PlanUpdate is the plan update.
type PlanUpdate struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Entries       []PlanEntry `json:"entries"`
	Meta          Meta        `json:"_meta,omitempty"`
}

// MarshalJSON sends an empty plan as [], never null.
func (u PlanUpdate) MarshalJSON() ([]byte, error) {
	type plain PlanUpdate
	u.Entries = nonNil(u.Entries)
	return json.Marshal(plain(u))
}

// UsageUpdate is usage_update.
type UsageUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Used          int64  `json:"used"`
	Size          int64  `json:"size"`
	Cost          *Cost  `json:"cost,omitempty"`
	Meta          any    `json:"_meta,omitempty"`
}

// Cost is an amount of money.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// SessionInfoUpdate is session_info_update.
type SessionInfoUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Title         string `json:"title,omitempty"`
	UpdatedAt     string `json:"updatedAt,omitempty"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// CurrentModeUpdate is current_mode_update.
type CurrentModeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	CurrentModeID string `json:"currentModeId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// ConfigOptionUpdate is config_option_update.
type ConfigOptionUpdate struct {
	SessionUpdate string                `json:"sessionUpdate"`
	ConfigOptions []SessionConfigOption `json:"configOptions"`
}

// MarshalJSON sends no options as [], never null.
func (u ConfigOptionUpdate) MarshalJSON() ([]byte, error) {
	type plain ConfigOptionUpdate
	u.ConfigOptions = nonNil(u.ConfigOptions)
	return json.Marshal(plain(u))
}

// AvailableCommandsUpdate is available_commands_update.
type AvailableCommandsUpdate struct {
	SessionUpdate     string             `json:"sessionUpdate"`
	AvailableCommands []AvailableCommand `json:"availableCommands"`
}

// MarshalJSON sends no commands as [], never null.
func (u AvailableCommandsUpdate) MarshalJSON() ([]byte, error) {
	type plain AvailableCommandsUpdate
	u.AvailableCommands = nonNil(u.AvailableCommands)
	return json.Marshal(plain(u))
}

// nonNil turns a nil slice into an empty one: the schema's required arrays
// reject null, and a Go zero value must not produce an invalid message.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// AvailableCommand is a slash command.
type AvailableCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *CommandInput `json:"input,omitempty"`
}

// CommandInput is an unstructured command input hint.
type CommandInput struct {
	Hint string `json:"hint"`
}
