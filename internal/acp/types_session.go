package acp

import "encoding/json"

// McpServer is an entry of mcpServers: stdio (no type, or "stdio"), http, sse.
type McpServer struct {
	Type    string      `json:"type,omitempty"`
	Name    string      `json:"name"`
	Command string      `json:"command,omitempty"`
	Args    []string    `json:"args,omitempty"`
	Env     []NameValue `json:"env,omitempty"`
	URL     string      `json:"url,omitempty"`
	Headers []NameValue `json:"headers,omitempty"`
	Meta    Meta        `json:"_meta,omitempty"`
}

// NameValue is an EnvVariable or HttpHeader.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// NewSessionRequest is the params of session/new. Old Gas City sends none.
type NewSessionRequest struct {
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	MCPServers            []McpServer `json:"mcpServers"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// NewSessionResponse is the result of session/new.
type NewSessionResponse struct {
	SessionID     string                `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// LoadSessionRequest is the params of session/load (and, with MCPServers
// optional, of session/resume and session/fork).
type LoadSessionRequest struct {
	SessionID             string      `json:"sessionId"`
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	MCPServers            []McpServer `json:"mcpServers"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// LoadSessionResponse is the result of session/load, session/resume.
type LoadSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// ListSessionsRequest is the params of session/list.
type ListSessionsRequest struct {
	Cwd    string `json:"cwd,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListSessionsResponse is the result of session/list.
type ListSessionsResponse struct {
	Sessions   []SessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// MarshalJSON sends no sessions as [], never null.
func (r ListSessionsResponse) MarshalJSON() ([]byte, error) {
	type plain ListSessionsResponse
	r.Sessions = nonNil(r.Sessions)
	return json.Marshal(plain(r))
}

func (ListSessionsResponse) compactJSON() {} // MarshalJSON is json.Marshal's

// SessionInfo describes a stored session.
type SessionInfo struct {
	SessionID             string   `json:"sessionId"`
	Cwd                   string   `json:"cwd"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	Title                 string   `json:"title,omitempty"`
	UpdatedAt             string   `json:"updatedAt,omitempty"`
	Meta                  Meta     `json:"_meta,omitempty"`
}

// SessionIDRequest is the params of session/cancel, session/close,
// session/delete.
type SessionIDRequest struct {
	SessionID string `json:"sessionId"`
}

// PromptRequest is the params of session/prompt.
type PromptRequest struct {
	SessionID string         `json:"sessionId"`
	Prompt    []ContentBlock `json:"prompt"`
	Meta      Meta           `json:"_meta,omitempty"`
}

// PromptResponse is the result of session/prompt.
type PromptResponse struct {
	StopReason string `json:"stopReason"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// Stop reasons.
const (
	StopEndTurn         = "end_turn"
	StopMaxTokens       = "max_tokens"
	StopMaxTurnRequests = "max_turn_requests"
	StopRefusal         = "refusal"
	StopCancelled       = "cancelled"
)

// SessionModeState is the modes field of session responses.
type SessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
}

// MarshalJSON sends no modes as [], never null.
func (m SessionModeState) MarshalJSON() ([]byte, error) {
	type plain SessionModeState
	m.AvailableModes = nonNil(m.AvailableModes)
	return json.Marshal(plain(m))
}

// SessionMode is one mode.
type SessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// SetSessionModeRequest is the params of session/set_mode.
type SetSessionModeRequest struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

// SessionConfigOption is a select or boolean option.
type SessionConfigOption struct {
	ID           string              `json:"id"`
	Name         string              `json:"name"`
	Description  string              `json:"description,omitempty"`
	Category     string              `json:"category,omitempty"`
	Type         string              `json:"type"` // select, boolean
	CurrentValue any                 `json:"currentValue"`
	Options      []ConfigSelectValue `json:"options,omitempty"` // select only (required there)
}

// MarshalJSON keeps options present (possibly empty) on selects.
func (o SessionConfigOption) MarshalJSON() ([]byte, error) {
	type plain SessionConfigOption
	if o.Type == "select" {
		o.Options = nonNil(o.Options)
		return json.Marshal(struct {
			plain
			Options []ConfigSelectValue `json:"options"`
		}{plain(o), o.Options})
	}
	return json.Marshal(plain(o))
}

// ConfigSelectValue is one value of a select option.
type ConfigSelectValue struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// SetSessionConfigOptionRequest is the params of session/set_config_option.
// Value is a string (value id) or, with Type "boolean", a JSON boolean.
type SetSessionConfigOptionRequest struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Type      string          `json:"type,omitempty"`
	Value     json.RawMessage `json:"value"`
}

// SetSessionConfigOptionResponse is its result.
type SetSessionConfigOptionResponse struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
}

// MarshalJSON sends no options as [], never null.
func (r SetSessionConfigOptionResponse) MarshalJSON() ([]byte, error) {
	type plain SetSessionConfigOptionResponse
	r.ConfigOptions = nonNil(r.ConfigOptions)
	return json.Marshal(plain(r))
}

func (SetSessionConfigOptionResponse) compactJSON() {} // MarshalJSON is json.Marshal's
