package acp

import "encoding/json"

// RequestPermissionRequest is the params of session/request_permission.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
}

// MarshalJSON sends no options as [], never null.
func (r RequestPermissionRequest) MarshalJSON() ([]byte, error) {
	type plain RequestPermissionRequest
	r.Options = nonNil(r.Options)
	return json.Marshal(plain(r))
}

// PermissionOption is one choice offered to the user.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // allow_once, allow_always, reject_once, reject_always
}

// RequestPermissionResponse is its result.
type RequestPermissionResponse struct {
	Outcome struct {
		Outcome  string `json:"outcome"` // selected, cancelled
		OptionID string `json:"optionId,omitempty"`
	} `json:"outcome"`
}

// ReadTextFileRequest is the params of fs/read_text_file.
type ReadTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Line      *int   `json:"line,omitempty"`
	Limit     *int   `json:"limit,omitempty"`
}

// ReadTextFileResponse is its result.
type ReadTextFileResponse struct {
	Content string `json:"content"`
}

// WriteTextFileRequest is the params of fs/write_text_file.
type WriteTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}

// CreateTerminalRequest is the params of terminal/create.
type CreateTerminalRequest struct {
	SessionID       string      `json:"sessionId"`
	Command         string      `json:"command"`
	Args            []string    `json:"args,omitempty"`
	Env             []NameValue `json:"env,omitempty"`
	Cwd             string      `json:"cwd,omitempty"`
	OutputByteLimit *int64      `json:"outputByteLimit,omitempty"`
}

// CreateTerminalResponse is its result.
type CreateTerminalResponse struct {
	TerminalID string `json:"terminalId"`
}

// TerminalRequest is the params of terminal/output, wait_for_exit, kill,
// release.
type TerminalRequest struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
}

// TerminalExitStatus is how a terminal's process ended.
type TerminalExitStatus struct {
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
}

// TerminalOutputResponse is the result of terminal/output.
type TerminalOutputResponse struct {
	Output     string              `json:"output"`
	Truncated  bool                `json:"truncated"`
	ExitStatus *TerminalExitStatus `json:"exitStatus,omitempty"`
}

// CreateElicitationRequest is the params of elicitation/create in session
// scope (corvid never elicits outside a session): mode "form" with
// RequestedSchema, or mode "url" with ElicitationID and URL.
type CreateElicitationRequest struct {
	SessionID       string          `json:"sessionId"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	URL             string          `json:"url,omitempty"`
}

// CreateElicitationResponse is its result: action accept (with content),
// decline or cancel.
type CreateElicitationResponse struct {
	Action  string                     `json:"action"`
	Content map[string]json.RawMessage `json:"content,omitempty"`
}

// CompleteElicitationNotification is the params of elicitation/complete.
type CompleteElicitationNotification struct {
	ElicitationID string `json:"elicitationId"`
}
