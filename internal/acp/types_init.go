package acp

import "encoding/json"

// Implementation names a client or agent (clientInfo / agentInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// InitializeRequest is the params of initialize.
type InitializeRequest struct {
	ProtocolVersion json.RawMessage `json:"protocolVersion,omitempty"`
	// ClientCapabilities is nil when the client sent none at all (old Gas
	// City), which corvid treats differently from an explicit empty object.
	ClientCapabilities *ClientCapabilities `json:"clientCapabilities,omitempty"`
	ClientInfo         *Implementation     `json:"clientInfo,omitempty"`
	Meta               Meta                `json:"_meta,omitempty"`
}

// ClientCapabilities is what the client supports. Decoded leniently: a
// malformed field counts as absent (x-deserialize-default-on-error).
type ClientCapabilities struct {
	FS          FileSystemCapabilities `json:"fs"`
	Terminal    bool                   `json:"terminal"`
	Auth        ClientAuthCapabilities `json:"auth"`
	Session     *ClientSessionCaps     `json:"session,omitempty"`
	Elicitation *ElicitationCaps       `json:"elicitation,omitempty"`
	Meta        Meta                   `json:"_meta,omitempty"`
}

// FileSystemCapabilities says which fs/* methods the client serves.
type FileSystemCapabilities struct {
	ReadTextFile  bool `json:"readTextFile"`
	WriteTextFile bool `json:"writeTextFile"`
}

// ClientAuthCapabilities: terminal auth support.
type ClientAuthCapabilities struct {
	Terminal bool `json:"terminal"`
}

// ClientSessionCaps are session-related client capabilities.
type ClientSessionCaps struct {
	ConfigOptions *struct {
		Boolean *struct{} `json:"boolean,omitempty"`
	} `json:"configOptions,omitempty"`
	// Notices ({}) lets the agent send `notice` updates.
	Notices *Present `json:"notices,omitempty"`
	// Compaction ({}) lets the agent send `compaction_update` and
	// `compaction_summary_chunk` updates.
	Compaction *Present `json:"compaction,omitempty"`
}

// ElicitationCaps are the elicitation modes the client supports.
type ElicitationCaps struct {
	Form *struct{} `json:"form,omitempty"`
	URL  *struct{} `json:"url,omitempty"`
}

// UnmarshalJSON decodes field by field so one malformed capability does not
// discard the others.
func (c *ClientCapabilities) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		*c = ClientCapabilities{}
		return nil
	}
	lenient := func(key string, into any) {
		if v, ok := raw[key]; ok {
			_ = json.Unmarshal(v, into)
		}
	}
	if v, ok := raw["fs"]; ok {
		var fs map[string]json.RawMessage
		if json.Unmarshal(v, &fs) == nil {
			_ = json.Unmarshal(fs["readTextFile"], &c.FS.ReadTextFile)
			_ = json.Unmarshal(fs["writeTextFile"], &c.FS.WriteTextFile)
		}
	}
	lenient("terminal", &c.Terminal)
	if v, ok := raw["auth"]; ok {
		var a map[string]json.RawMessage
		if json.Unmarshal(v, &a) == nil {
			_ = json.Unmarshal(a["terminal"], &c.Auth.Terminal)
		}
	}
	// Presence capabilities count only when they are objects, so a
	// malformed one ("boolean": true) reads as absent, not as supported.
	if session, ok := objectFields(raw["session"]); ok {
		c.Session = &ClientSessionCaps{}
		if opts, ok := objectFields(session["configOptions"]); ok {
			c.Session.ConfigOptions = new(struct {
				Boolean *struct{} `json:"boolean,omitempty"`
			})
			if _, ok := objectFields(opts["boolean"]); ok {
				c.Session.ConfigOptions.Boolean = &struct{}{}
			}
		}
		if _, ok := objectFields(session["notices"]); ok {
			c.Session.Notices = &Present{}
		}
		if _, ok := objectFields(session["compaction"]); ok {
			c.Session.Compaction = &Present{}
		}
	}
	if el, ok := objectFields(raw["elicitation"]); ok {
		c.Elicitation = &ElicitationCaps{}
		if _, ok := objectFields(el["form"]); ok {
			c.Elicitation.Form = &struct{}{}
		}
		if _, ok := objectFields(el["url"]); ok {
			c.Elicitation.URL = &struct{}{}
		}
	}
	lenient("_meta", &c.Meta)
	return nil
}

// objectFields decodes v if it is a JSON object.
func objectFields(v json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// BooleanConfigOptions reports session.configOptions.boolean.
func (c *ClientCapabilities) BooleanConfigOptions() bool {
	return c != nil && c.Session != nil && c.Session.ConfigOptions != nil && c.Session.ConfigOptions.Boolean != nil
}

// Notices reports session.notices: the client presents `notice` updates.
func (c *ClientCapabilities) Notices() bool {
	return c != nil && c.Session != nil && c.Session.Notices != nil
}

// Compaction reports session.compaction: the client follows compactions
// through `compaction_update` and `compaction_summary_chunk`.
func (c *ClientCapabilities) Compaction() bool {
	return c != nil && c.Session != nil && c.Session.Compaction != nil
}

// InitializeResponse is the result of initialize.
type InitializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	AuthMethods       []AuthMethod      `json:"authMethods"`
	Meta              Meta              `json:"_meta,omitempty"`
}

// MarshalJSON sends authMethods as [] when there are none.
func (r InitializeResponse) MarshalJSON() ([]byte, error) {
	type plain InitializeResponse
	r.AuthMethods = nonNil(r.AuthMethods)
	return json.Marshal(plain(r))
}

func (InitializeResponse) compactJSON() {} // MarshalJSON is json.Marshal's

// AgentCapabilities is what corvid advertises. Keep it truthful.
type AgentCapabilities struct {
	LoadSession         bool                `json:"loadSession,omitempty"`
	PromptCapabilities  PromptCapabilities  `json:"promptCapabilities"`
	MCPCapabilities     MCPCapabilities     `json:"mcpCapabilities"`
	SessionCapabilities SessionCapabilities `json:"sessionCapabilities"`
	Auth                *AgentAuthCaps      `json:"auth,omitempty"`
	Meta                Meta                `json:"_meta,omitempty"`
	// CodeBuddy's root-level flags (not in the ACP v1 schema): set only
	// under --compat codebuddy.
	MultitaskSupport *bool `json:"multitaskSupport,omitempty"`
	CodeModeSupport  *bool `json:"codeModeSupport,omitempty"`
}

// PromptCapabilities: which content blocks prompts may carry.
type PromptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

// MCPCapabilities: which MCP transports corvid connects to.
type MCPCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

// Present is a presence capability: {} means supported, nil omitted.
type Present struct{}

// SessionCapabilities are presence objects for optional session methods.
type SessionCapabilities struct {
	List                  *Present `json:"list,omitempty"`
	Delete                *Present `json:"delete,omitempty"`
	Resume                *Present `json:"resume,omitempty"`
	Close                 *Present `json:"close,omitempty"`
	AdditionalDirectories *Present `json:"additionalDirectories,omitempty"`
	Fork                  *Present `json:"fork,omitempty"`
}

// AgentAuthCaps: logout support.
type AgentAuthCaps struct {
	Logout *Present `json:"logout,omitempty"`
}

// AuthMethod is an entry of authMethods. Type is "" (agent, untagged in v1)
// or "terminal".
type AuthMethod struct {
	Type        string            `json:"type,omitempty"`
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// AuthenticateRequest is the params of authenticate.
type AuthenticateRequest struct {
	MethodID string `json:"methodId"`
}
