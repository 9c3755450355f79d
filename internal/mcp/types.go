package mcp

import (
	"bytes"
	"encoding/json"
)

// The MCP messages corvid sends and reads, as plain structs: only the
// fields corvid uses. Field names follow the MCP schema (2025-11-25).

// implementation names a client or a server.
type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Initialize ------------------------------------------------------------

type initializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    clientCapabilities `json:"capabilities"`
	ClientInfo      implementation     `json:"clientInfo"`
}

// clientCapabilities are what corvid offers a server: roots (with
// list_changed) when it has roots, sampling when it samples, elicitation
// in the modes its editor shows.
type clientCapabilities struct {
	Roots       *rootsCapability       `json:"roots,omitempty"`
	Sampling    *struct{}              `json:"sampling,omitempty"`
	Elicitation *elicitationCapability `json:"elicitation,omitempty"`
}

type rootsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

type elicitationCapability struct {
	Form *struct{} `json:"form,omitempty"`
	URL  *struct{} `json:"url,omitempty"`
}

type initializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    serverCapabilities `json:"capabilities"`
	ServerInfo      implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}

// serverCapabilities: a feature is offered when its key is present.
type serverCapabilities struct {
	Tools     json.RawMessage `json:"tools,omitempty"`
	Prompts   json.RawMessage `json:"prompts,omitempty"`
	Resources json.RawMessage `json:"resources,omitempty"`
}

// has reports whether a capability is present (and not null).
func has(c json.RawMessage) bool {
	return len(c) > 0 && !bytes.Equal(c, []byte("null"))
}

// Tools -----------------------------------------------------------------

type toolDef struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	InputSchema json.RawMessage  `json:"inputSchema,omitempty"`
	Annotations *toolAnnotations `json:"annotations,omitempty"`
}

type toolAnnotations struct {
	Title        string `json:"title,omitempty"`
	ReadOnlyHint bool   `json:"readOnlyHint,omitempty"`
}

type callToolParams struct {
	Meta      *requestMeta   `json:"_meta,omitempty"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// requestMeta carries a request's progress token.
type requestMeta struct {
	ProgressToken any `json:"progressToken,omitempty"`
}

type callToolResult struct {
	Content           []*content `json:"content"`
	StructuredContent any        `json:"structuredContent,omitempty"`
	IsError           bool       `json:"isError,omitempty"`
}

// content is one content block: type "text", "image", "audio",
// "resource_link" or "resource" (an embedded resource), each using some of
// the fields. Image and audio data are base64 on the wire.
type content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     []byte `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	// resource_link
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// resource
	Resource *resourceContents `json:"resource,omitempty"`
}

// textContent is a text block as corvid sends it (text always present).
type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// contents is one content block or a list of them (sampling messages may
// carry either).
type contents []*content

func (c *contents) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, (*[]*content)(c))
	}
	var one *content
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*c = contents{one}
	return nil
}

// Prompts ---------------------------------------------------------------

type promptDef struct {
	Name        string            `json:"name"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Arguments   []*promptArgument `json:"arguments,omitempty"`
}

type promptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

type getPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

type getPromptResult struct {
	Messages []*promptMessage `json:"messages"`
}

type promptMessage struct {
	Role    string   `json:"role"`
	Content *content `json:"content"`
}

// Resources -------------------------------------------------------------

type resourceDef struct {
	URI         string `json:"uri"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

type resourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

type readResourceParams struct {
	URI string `json:"uri"`
}

type readResourceResult struct {
	Contents []*resourceContents `json:"contents"`
}

// resourceContents is text or a base64 blob.
type resourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"`
}

// Lists -----------------------------------------------------------------

type listParams struct {
	Cursor string `json:"cursor,omitempty"`
}

// listResult is one page of a list: the items of whichever list was
// asked for, and the cursor of the next page ("" on the last).
type listResult struct {
	NextCursor string              `json:"nextCursor,omitempty"`
	Tools      []*toolDef          `json:"tools"`
	Prompts    []*promptDef        `json:"prompts"`
	Resources  []*resourceDef      `json:"resources"`
	Templates  []*resourceTemplate `json:"resourceTemplates"`
}

// Notifications and the server's requests ---------------------------------

type progressParams struct {
	ProgressToken any     `json:"progressToken"`
	Progress      float64 `json:"progress"`
	Total         float64 `json:"total,omitempty"`
	Message       string  `json:"message,omitempty"`
}

type cancelledParams struct {
	RequestID any    `json:"requestId"`
	Reason    string `json:"reason,omitempty"`
}

type logMessageParams struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

type root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

type listRootsResult struct {
	Roots []*root `json:"roots"`
}

type elicitParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
}

type elicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

type elicitationCompleteParams struct {
	ElicitationID string `json:"elicitationId"`
}

type createMessageParams struct {
	Messages     []*samplingMessage `json:"messages"`
	SystemPrompt string             `json:"systemPrompt,omitempty"`
	MaxTokens    int64              `json:"maxTokens"`
}

type samplingMessage struct {
	Role    string   `json:"role"`
	Content contents `json:"content"`
}

type createMessageResult struct {
	Role       string      `json:"role"`
	Content    textContent `json:"content"`
	Model      string      `json:"model"`
	StopReason string      `json:"stopReason,omitempty"`
}
