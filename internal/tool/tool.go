// Package tool defines what a tool is to the agent loop (Tool, Env, Preview,
// Result) and holds the built-in tools, one file each with its model-facing
// description embedded from a .md file beside it.
//
// A failure the model can act on ("file not found", "old text not found") is
// a Result with IsError set, never a Go error: Go errors are reserved for
// infrastructure faults and cancellation.
package tool

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"

	"github.com/corvid-agent/corvid/internal/llm"
)

// Kind is how an editor should render a tool call (ACP ToolKind values).
type Kind string

const (
	KindRead    Kind = "read"
	KindEdit    Kind = "edit"
	KindDelete  Kind = "delete"
	KindMove    Kind = "move"
	KindSearch  Kind = "search"
	KindExecute Kind = "execute"
	KindThink   Kind = "think"
	KindFetch   Kind = "fetch"
	KindOther   Kind = "other"
)

// Access is what a call needs, for the permission gate.
type Access string

const (
	AccessRead    Access = "read"
	AccessWrite   Access = "write"
	AccessExecute Access = "execute"
	AccessNetwork Access = "network"
	AccessNone    Access = "none" // e.g. the todo list
)

// Location is a file position an editor can follow (Line is 1-based, 0 = none).
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// ContentType discriminates Content.
type ContentType string

const (
	ContentText     ContentType = "text"
	ContentDiff     ContentType = "diff"
	ContentTerminal ContentType = "terminal"
	ContentImage    ContentType = "image"
)

// Content is what a tool call shows the user (not what the model reads).
type Content struct {
	Type       ContentType `json:"type"`
	Text       string      `json:"text,omitempty"`
	Path       string      `json:"path,omitempty"`
	OldText    *string     `json:"oldText,omitempty"` // nil: new file
	NewText    string      `json:"newText,omitempty"`
	TerminalID string      `json:"terminalId,omitempty"`
	MimeType   string      `json:"mimeType,omitempty"`
	Data       []byte      `json:"data,omitempty"`
}

// PlanEntry is one item of the model's task list.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"` // high, medium, low
	Status   string `json:"status"`   // pending, in_progress, completed
}

// Preview is how a call looks before it runs: enough for the editor to render
// it and for the permission gate to decide.
type Preview struct {
	Kind      Kind
	Title     string
	Locations []Location
	Content   []Content // e.g. the proposed diff, shown in the permission request
	Access    Access
	Paths     []string // absolute paths the call touches
	Command   string   // shell command line, for execute
	URL       string   // the address a network call reaches, for fetch
	// Targets are where the file paths a write touches led when the call
	// was described; the tool refuses to write if they lead elsewhere by
	// the time it runs.
	Targets []Target
	// DeclaredReadOnly: the tool itself says the call changes nothing (an
	// MCP tool's readOnlyHint). An unverified claim: plan mode lets such a
	// call through to the usual rules and questions, nothing more.
	DeclaredReadOnly bool
}

// Result is the outcome of a call.
type Result struct {
	Output    string     // what the model reads
	Images    []llm.Part // image parts for the model, if it accepts images
	IsError   bool       // a failure the model can act on
	Content   []Content  // what the user sees
	Locations []Location
	Plan      []PlanEntry // set by the todo tool: the complete list
	HasPlan   bool
}

// ErrorResult is a model-facing failure.
func ErrorResult(msg string) Result {
	return Result{Output: msg, IsError: true, Content: []Content{{Type: ContentText, Text: msg}}}
}

// Call is one invocation.
type Call struct {
	ID    string
	Input json.RawMessage
	// Progress, if set, shows intermediate content (e.g. an embedded terminal).
	Progress func([]Content)
	// Live, if set, shows intermediate content that is never stored (a
	// running command's output so far): a replay shows the call's final
	// content only. Calls to it stop before Run returns.
	Live func([]Content)
	// Preview is the description the permission gate decided on (nil when
	// the call was not described first); file tools write only to its
	// Targets.
	Preview *Preview
}

// FS is file access. The default is the local disk; the ACP adapter may
// supply one backed by the client's fs/* methods.
type FS interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// Env is where a tool runs. One Env belongs to one session; its backends
// are shared by concurrent calls and must be safe for concurrent use.
type Env struct {
	Cwd   string
	Roots []string // cwd first, then additional directories
	FS    FS       // nil: LocalFS
	// Images reports whether the model accepts image input.
	Images bool
	// Terminals runs shell commands. nil: a process-wide LocalTerminals;
	// a session should set its own (NewLocalTerminals, or one backed by
	// the client's terminal/* methods) and close it when the session ends.
	Terminals Terminals
	// HTTPClient is used by fetch. nil: a client with fetch's own timeout.
	HTTPClient *http.Client
	// Sandbox confines shell commands; nil runs them unconfined.
	Sandbox *Sandbox
	// Ask puts questions to the user (ask_user, MCP elicitations); nil:
	// nobody can be asked.
	Ask Asker
}

func (env *Env) fs() FS {
	if env.FS != nil {
		return env.FS
	}
	return LocalFS{}
}

func (env *Env) terminals() Terminals {
	if env.Terminals != nil {
		return env.Terminals
	}
	return defaultTerminals
}

// Tool is one capability the model can call.
type Tool interface {
	Name() string
	Description() string
	InputSchema() json.RawMessage
	Describe(env *Env, input json.RawMessage) Preview
	Run(ctx context.Context, env *Env, call Call) (Result, error)
}

// PermissionNamer is implemented by tools whose name in permission rules
// differs from the name the model calls them by (MCP tools: the model sees
// "server__tool", rules say "mcp:server/tool").
type PermissionNamer interface {
	PermissionName() string
}

// PermissionName is the name permission rules use for t.
func PermissionName(t Tool) string {
	if p, ok := t.(PermissionNamer); ok {
		return p.PermissionName()
	}
	return t.Name()
}

// Registry is a set of tools by name.
type Registry struct{ tools map[string]Tool }

// NewRegistry returns a registry holding ts.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{tools: map[string]Tool{}}
	for _, t := range ts {
		r.Add(t)
	}
	return r
}

// Add adds or replaces a tool.
func (r *Registry) Add(t Tool) { r.tools[t.Name()] = t }

// Get returns the named tool.
func (r *Registry) Get(name string) (Tool, bool) { t, ok := r.tools[name]; return t, ok }

// Specs lists the tools for the model, sorted by name.
func (r *Registry) Specs() []llm.ToolSpec {
	specs := make([]llm.ToolSpec, 0, len(r.tools))
	for _, t := range r.tools {
		specs = append(specs, llm.ToolSpec{Name: t.Name(), Description: t.Description(), InputSchema: t.InputSchema()})
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs
}

// Builtins returns the built-in tools.
func Builtins() []Tool {
	return []Tool{
		Read{}, Write{}, Edit{}, Delete{}, Move{},
		List{}, Glob{}, Grep{},
		Shell{}, ShellOutput{}, ShellKill{},
		Fetch{}, Todo{}, AskUser{},
	}
}
