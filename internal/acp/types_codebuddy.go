package acp

import (
	"encoding/json"
	"fmt"
)

// CodeBuddy's dialect (docs/codebuddy.md): methods and fields that are not
// in the ACP v1 schema. corvid answers the methods on any connection (a
// client only gets their answers by asking); the non-schema fields and
// update kinds are sent only under `--compat codebuddy`.

// AuthenticateResponse is the result of authenticate; CodeBuddy reads
// _meta["codebuddy.ai/userinfo"].
type AuthenticateResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// SetSessionAgentRequest is the params of session/set_agent. CodeBuddy's
// wire shape is not public; corvid takes the profile's name as agentName
// (the field set_multitask answers with), agentId or agent.
type SetSessionAgentRequest struct {
	SessionID string `json:"sessionId"`
	AgentName string `json:"agentName,omitempty"`
	AgentID   string `json:"agentId,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// Name is the profile name the request gives.
func (r *SetSessionAgentRequest) Name() string {
	switch {
	case r.AgentName != "":
		return r.AgentName
	case r.AgentID != "":
		return r.AgentID
	}
	return r.Agent
}

// Validate requires sessionId and a profile name.
func (r *SetSessionAgentRequest) Validate() error {
	if err := requireSession(r.SessionID); err != nil {
		return err
	}
	if r.Name() == "" {
		return InvalidParams("Invalid params", "agentName is required: the name of an agent profile (corvid agents lists them)")
	}
	return nil
}

// SetSessionAgentResponse is its result.
type SetSessionAgentResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// SetMultitaskRequest is the params of CodeBuddy's session/set_multitask:
// Enabled true enters, false exits, absent toggles.
type SetMultitaskRequest struct {
	SessionID string          `json:"sessionId"`
	Enabled   json.RawMessage `json:"enabled,omitempty"`
}

// Validate requires sessionId and, when enabled is present, a JSON boolean.
func (r *SetMultitaskRequest) Validate() error {
	if err := requireSession(r.SessionID); err != nil {
		return err
	}
	if _, err := r.Want(); err != nil {
		return err
	}
	return nil
}

// Want is the requested state; nil means toggle.
func (r *SetMultitaskRequest) Want() (*bool, error) {
	if len(r.Enabled) == 0 || string(r.Enabled) == "null" {
		return nil, nil
	}
	var b bool
	if string(r.Enabled) != "true" && string(r.Enabled) != "false" || json.Unmarshal(r.Enabled, &b) != nil {
		return nil, InvalidParams("Invalid params", fmt.Sprintf("enabled must be a JSON boolean (true enters multitask, false exits, omitted toggles); got %s", r.Enabled))
	}
	return &b, nil
}

// SetMultitaskResponse is its result.
type SetMultitaskResponse struct {
	OK        bool   `json:"ok"`
	On        bool   `json:"on"`
	Already   bool   `json:"already"`
	AgentName string `json:"agentName"`
	Message   string `json:"message"`
}

// SessionEndUpdate is CodeBuddy's session_end update (not an ACP v1
// sessionUpdate): it closes a turn. Sent only under --compat codebuddy.
type SessionEndUpdate struct {
	SessionUpdate string `json:"sessionUpdate"` // "session_end"
	StopReason    string `json:"stopReason,omitempty"`
	Meta          Meta   `json:"_meta,omitempty"`
}
