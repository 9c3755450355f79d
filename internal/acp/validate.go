package acp

import "encoding/json"

// Validate methods check what the schema requires of a request beyond its
// JSON shape. A server calls them once, right after decoding, so handlers
// start from params that are known to be well formed. Each returns -32602.

// LogoutRequest is the params of logout (none besides _meta).
type LogoutRequest struct {
	Meta Meta `json:"_meta,omitempty"`
}

func errNoSessionID() *Error { return InvalidParams("Invalid params", "sessionId is required") }

// Validate accepts any integer protocolVersion: the answer is always 1.
func (r *InitializeRequest) Validate() error {
	if len(r.ProtocolVersion) > 0 {
		var v json.Number
		if err := json.Unmarshal(r.ProtocolVersion, &v); err != nil {
			return InvalidParams("Invalid params", "protocolVersion must be an integer")
		}
	}
	return nil
}

// Validate requires sessionId.
func (r *LoadSessionRequest) Validate() error { return requireSession(r.SessionID) }

// Validate requires sessionId.
func (r *SessionIDRequest) Validate() error { return requireSession(r.SessionID) }

// Validate requires sessionId; the prompt itself is checked block by block
// by the server, which knows what the model accepts.
func (r *PromptRequest) Validate() error { return requireSession(r.SessionID) }

// Validate requires sessionId.
func (r *SetSessionModeRequest) Validate() error { return requireSession(r.SessionID) }

// Validate requires sessionId.
func (r *SetSessionConfigOptionRequest) Validate() error { return requireSession(r.SessionID) }

func requireSession(id string) error {
	if id == "" {
		return errNoSessionID()
	}
	return nil
}
