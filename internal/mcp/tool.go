package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/corvid-agent/corvid/internal/tool"
)

// maxToolName is the longest tool name every provider accepts.
const maxToolName = 64

// mcpTool is one tool of one server, as the agent loop sees it.
type mcpTool struct {
	c    *conn
	def  *toolDef
	name string // model-facing, unique in its Manager.Tools list
}

var _ tool.PermissionNamer = (*mcpTool)(nil)

func newTool(c *conn, def *toolDef, name string) *mcpTool {
	return &mcpTool{c: c, def: def, name: name}
}

func (t *mcpTool) Name() string { return t.name }

// PermissionName is how rules name the tool: mcp:<server>/<tool>.
func (t *mcpTool) PermissionName() string { return "mcp:" + t.c.srv.Name + "/" + t.def.Name }

func (t *mcpTool) Description() string {
	if d := cmp.Or(t.def.Description, t.def.Title); d != "" {
		return d
	}
	return fmt.Sprintf("The tool %q of the MCP server %q.", t.def.Name, t.c.srv.Name)
}

// InputSchema is the server's schema, made a JSON object schema (some
// providers refuse anything else).
func (t *mcpTool) InputSchema() json.RawMessage {
	return objectSchema(t.def.InputSchema)
}

func objectSchema(s any) json.RawMessage {
	empty := json.RawMessage(`{"type":"object","properties":{}}`)
	b, err := json.Marshal(s)
	if err != nil {
		return empty
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return empty
	}
	changed := false
	if _, ok := m["type"]; !ok {
		m["type"], changed = "object", true
	}
	if _, ok := m["properties"]; !ok && m["type"] == "object" {
		m["properties"], changed = map[string]any{}, true
	}
	if !changed {
		return b
	}
	if b, err = json.Marshal(m); err != nil {
		return empty
	}
	return b
}

// Describe: every MCP tool asks by default. The server's annotations are
// hints from a party corvid does not control, so they shape only how the
// call is shown (Kind), never whether it may run unasked.
func (t *mcpTool) Describe(env *tool.Env, input json.RawMessage) tool.Preview {
	title := t.def.Title
	if title == "" && t.def.Annotations != nil {
		title = t.def.Annotations.Title
	}
	return tool.Preview{
		Kind:   inferKind(t.def),
		Title:  t.c.srv.Name + ": " + cmp.Or(title, t.def.Name),
		Access: tool.AccessExecute,
		// Plan mode runs (subject to rules and questions) a tool that
		// declares it changes nothing; it still asks like any MCP tool.
		DeclaredReadOnly: t.def.Annotations != nil && t.def.Annotations.ReadOnlyHint,
	}
}

// inferKind: a name that says fetch or search wins over the read-only
// hint, which says only that nothing changes.
func inferKind(def *toolDef) tool.Kind {
	words := splitWords(def.Name)
	for _, w := range words {
		switch w {
		case "fetch", "download", "http", "https", "url", "browse", "scrape", "crawl", "curl", "wget", "web":
			return tool.KindFetch
		}
	}
	for _, w := range words {
		switch w {
		case "search", "find", "query", "grep", "lookup", "locate", "lookups":
			return tool.KindSearch
		}
	}
	if def.Annotations != nil && def.Annotations.ReadOnlyHint {
		return tool.KindRead
	}
	return tool.KindOther
}

// splitWords splits a tool name at punctuation and camelCase humps,
// lower-cased: "searchIssues" and "search_issues" give [search issues].
func splitWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

// Run calls the tool. A server's failure, a crash or a lost connection is
// a failed Result for the model; only cancellation is a Go error.
func (t *mcpTool) Run(ctx context.Context, env *tool.Env, call tool.Call) (res tool.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			t.c.m.log.Error("mcp tool call panicked", "tool", t.name, "panic", r)
			res, err = tool.ErrorResult(fmt.Sprintf("calling the MCP tool %q failed unexpectedly", t.PermissionName())), nil
		}
	}()
	args := map[string]any{}
	if in := strings.TrimSpace(string(call.Input)); in != "" && in != "null" {
		if err := json.Unmarshal(call.Input, &args); err != nil {
			return tool.ErrorResult(fmt.Sprintf("the input of %s must be a JSON object: %v", t.name, err)), nil
		}
		if args == nil {
			args = map[string]any{}
		}
	}
	var progress func(*progressParams)
	if call.Progress != nil {
		progress = throttle(func(p *progressParams) {
			call.Progress([]tool.Content{{Type: tool.ContentText, Text: progressText(p)}})
		})
	}
	defer t.c.enterCall(ctx, call.ID)()
	r, err := t.c.callTool(ctx, t.def.Name, args, progress)
	if ctx.Err() != nil {
		return tool.Result{}, ctx.Err()
	}
	if err != nil {
		return tool.ErrorResult(err.Error()), nil
	}
	res = toResult(r, env != nil && env.Images)
	if hasLinks(r) && t.c.offersResources() {
		res.Output += fmt.Sprintf("\n(read a resource link with the %s tool, server %q)", ResourceToolName, t.c.srv.Name)
	}
	return res, nil
}

// progressInterval bounds how often a call's progress reaches the
// editor; the last report before the end always does.
const progressInterval = 250 * time.Millisecond

// throttle passes on at most one progress report per progressInterval,
// and always one that completes the total.
func throttle(f func(*progressParams)) func(*progressParams) {
	var mu sync.Mutex
	var last time.Time
	return func(p *progressParams) {
		mu.Lock()
		now := time.Now()
		final := p.Total > 0 && p.Progress >= p.Total
		if !final && now.Sub(last) < progressInterval {
			mu.Unlock()
			return
		}
		last = now
		f(p)
		mu.Unlock()
	}
}

// toolNamer gives each tool a model-safe name, unique in one list.
type toolNamer struct{ used map[string]bool }

func newToolNamer() *toolNamer { return &toolNamer{used: map[string]bool{}} }

// name is <server>__<tool>, with every character outside [a-zA-Z0-9_-]
// replaced by '_'; a name too long ends in a hash of the original, and a
// clash gets _2, _3, ….
func (n *toolNamer) name(server, tool string) string {
	base := sanitize(server) + "__" + sanitize(tool)
	if len(base) > maxToolName {
		h := fnv.New32a()
		h.Write([]byte(server + "/" + tool))
		base = fmt.Sprintf("%s_%08x", base[:maxToolName-9], h.Sum32())
	}
	name := base
	for i := 2; n.used[name]; i++ {
		suffix := fmt.Sprintf("_%d", i)
		name = base[:min(len(base), maxToolName-len(suffix))] + suffix
	}
	n.used[name] = true
	return name
}

func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}
