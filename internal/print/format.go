package print

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/termsafe"
	"github.com/corvid-agent/corvid/internal/tool"
)

// writer renders one run in a format.
type writer interface {
	start(sessionID string)
	event(ev agent.Event)
	finish(sessionID, stopReason string, isError bool)
	// fail reports an error that ended the run and returns the exit code.
	fail(sessionID string, err error, stderr io.Writer) int
}

func newWriter(format string, w io.Writer, terminal bool) (writer, error) {
	switch format {
	case FormatText:
		if terminal {
			tw := termsafe.NewWriter(w)
			return &textWriter{w: tw, flush: tw.Flush}, nil
		}
		return &textWriter{w: w}, nil
	case FormatJSON:
		return &jsonWriter{w: w}, nil
	case FormatStreamJSON:
		return &jsonWriter{w: w, stream: true}, nil
	}
	return nil, fmt.Errorf("unknown --format %q: use text, json or stream-json", format)
}

// textWriter streams the answer's text and nothing else.
type textWriter struct {
	w     io.Writer
	last  byte
	flush func() error // what termsafe holds back, written at the end
}

func (t *textWriter) start(string) {}

func (t *textWriter) event(ev agent.Event) {
	if ev.Kind != agent.EventMessageChunk || ev.Content == nil || ev.Content.Type != agent.BlockText || ev.Content.Text == "" {
		return
	}
	if format, ok := finalFormat(ev); ok {
		// The final output comes last, set apart and labelled.
		if t.last != 0 && t.last != '\n' {
			_, _ = io.WriteString(t.w, "\n")
		}
		_, _ = io.WriteString(t.w, "\n--- final output ("+format+") ---\n")
	}
	_, _ = io.WriteString(t.w, ev.Content.Text)
	t.last = ev.Content.Text[len(ev.Content.Text)-1]
}

func (t *textWriter) finish(string, string, bool) {
	if t.last != 0 && t.last != '\n' {
		_, _ = io.WriteString(t.w, "\n")
	}
	if t.flush != nil {
		_ = t.flush()
	}
}

func (t *textWriter) fail(_ string, err error, stderr io.Writer) int {
	t.finish("", "", true)
	fmt.Fprintln(stderr, "corvid:", err)
	return ExitError
}

// jsonWriter writes one result object at the end (json), or one event a
// line as they happen and the result last (stream-json).
type jsonWriter struct {
	w      io.Writer
	stream bool

	mu    sync.Mutex
	text  strings.Builder
	final *finalOutput
	usage *agent.Usage
}

type finalOutput struct {
	Format string `json:"format"`
	Text   string `json:"text"`
}

// finalFormat reports whether ev carries the final output, and its label.
func finalFormat(ev agent.Event) (string, bool) {
	if ev.FinalOutput == nil {
		return "", false
	}
	return ev.FinalOutput.Format, true
}

// result is the json format's object and stream-json's last line.
type result struct {
	Type       string `json:"type"`
	SessionID  string `json:"sessionId,omitempty"`
	Text       string `json:"text"`
	StopReason string `json:"stopReason,omitempty"`
	IsError    bool   `json:"isError"`
	Error      string `json:"error,omitempty"`
	// FinalOutput is what the agent submitted (with --output-format).
	FinalOutput *finalOutput `json:"finalOutput,omitempty"`
	Usage       *usage       `json:"usage,omitempty"`
	CostUSD     *float64     `json:"costUsd,omitempty"`
}

type usage struct {
	Used int64 `json:"used"` // tokens in the context window after the turn
	Size int64 `json:"size"` // the context window
}

func (j *jsonWriter) line(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	_, _ = j.w.Write(append(b, '\n'))
}

func (j *jsonWriter) start(sessionID string) {
	if j.stream {
		j.line(map[string]any{"type": "session", "sessionId": sessionID})
	}
}

func (j *jsonWriter) event(ev agent.Event) {
	j.mu.Lock()
	if ev.Kind == agent.EventMessageChunk && ev.Content != nil && ev.Content.Type == agent.BlockText {
		if format, ok := finalFormat(ev); ok {
			j.final = &finalOutput{Format: format, Text: ev.Content.Text}
		} else {
			j.text.WriteString(ev.Content.Text)
		}
	}
	if ev.Kind == agent.EventUsage && ev.Usage != nil {
		u := *ev.Usage
		j.usage = &u
	}
	j.mu.Unlock()
	if !j.stream {
		return
	}
	if u := updateOf(ev); u != nil {
		j.line(map[string]any{"type": "update", "update": u})
	}
}

func (j *jsonWriter) result(sessionID, stopReason string, isError bool, errText string) result {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := result{Type: "result", SessionID: sessionID, Text: j.text.String(), StopReason: stopReason, IsError: isError, Error: errText, FinalOutput: j.final}
	if j.usage != nil {
		r.Usage = &usage{Used: j.usage.Used, Size: j.usage.Size}
		r.CostUSD = j.usage.CostUSD
	}
	return r
}

func (j *jsonWriter) finish(sessionID, stopReason string, isError bool) {
	j.line(j.result(sessionID, stopReason, isError, ""))
}

func (j *jsonWriter) fail(sessionID string, err error, stderr io.Writer) int {
	fmt.Fprintln(stderr, "corvid:", err)
	j.line(j.result(sessionID, "", true, err.Error()))
	return ExitError
}

// updateOf renders an event as the ACP front end's session/update would
// carry it (the same sessionUpdate tags and field names), or nil for events
// that say nothing about the turn.
func updateOf(ev agent.Event) map[string]any {
	u := map[string]any{"sessionUpdate": string(ev.Kind)}
	switch ev.Kind {
	case agent.EventUserChunk, agent.EventMessageChunk, agent.EventThoughtChunk:
		if ev.Content == nil {
			return nil
		}
		u["content"] = blockJSON(*ev.Content)
		if ev.MessageID != "" {
			u["messageId"] = ev.MessageID
		}
		if m := tagMeta(ev); m != nil {
			u["_meta"] = m
		}
	case agent.EventToolCall, agent.EventToolCallState:
		if ev.ToolCall == nil {
			return nil
		}
		tc := ev.ToolCall
		u["toolCallId"] = tc.ID
		set := func(k, v string) {
			if v != "" {
				u[k] = v
			}
		}
		set("title", tc.Title)
		set("kind", string(tc.Kind))
		set("status", string(tc.Status))
		if len(tc.RawInput) > 0 {
			u["rawInput"] = tc.RawInput
		}
		if len(tc.RawOutput) > 0 {
			u["rawOutput"] = tc.RawOutput
		}
		if len(tc.Content) > 0 {
			var cs []any
			for _, c := range tc.Content {
				cs = append(cs, toolContentJSON(c))
			}
			u["content"] = cs
		}
		if len(tc.Locations) > 0 {
			u["locations"] = tc.Locations
		}
	case agent.EventPlan:
		u["entries"] = ev.Plan
	case agent.EventUsage:
		if ev.Usage == nil {
			return nil
		}
		u["used"], u["size"] = ev.Usage.Used, ev.Usage.Size
		if ev.Usage.CostUSD != nil {
			u["cost"] = map[string]any{"amount": *ev.Usage.CostUSD, "currency": "USD"}
		}
	case agent.EventInfo:
		u["title"] = ev.Title
		if ev.UpdatedAt != "" {
			u["updatedAt"] = ev.UpdatedAt
		}
	case agent.EventMode:
		u["currentModeId"] = ev.ModeID
	default:
		return nil // commands and config options concern an interactive client
	}
	return u
}

func blockJSON(b agent.Block) map[string]any {
	m := map[string]any{"type": string(b.Type)}
	switch b.Type {
	case agent.BlockText:
		m["text"] = b.Text
	case agent.BlockImage, agent.BlockAudio:
		m["data"], m["mimeType"] = base64.StdEncoding.EncodeToString(b.Data), b.MimeType
	case agent.BlockResourceLink:
		m["uri"], m["name"] = b.URI, b.Name
	case agent.BlockResource:
		r := map[string]any{"uri": b.URI}
		if b.Blob {
			r["blob"] = base64.StdEncoding.EncodeToString(b.Data)
		} else {
			r["text"] = b.Text
		}
		m["resource"] = r
	}
	return m
}

func toolContentJSON(c tool.Content) map[string]any {
	switch c.Type {
	case tool.ContentDiff:
		m := map[string]any{"type": "diff", "path": c.Path, "newText": c.NewText}
		if c.OldText != nil {
			m["oldText"] = *c.OldText
		}
		return m
	case tool.ContentTerminal:
		return map[string]any{"type": "terminal", "terminalId": c.TerminalID}
	case tool.ContentImage:
		return map[string]any{"type": "content", "content": map[string]any{"type": "image", "data": base64.StdEncoding.EncodeToString(c.Data), "mimeType": c.MimeType}}
	}
	return map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": c.Text}}
}

// tagMeta spells a chunk's typed tags (agent.Tags) as the _meta corvid's
// ACP front end gives them under its own keys (acpserver/dialect.go): the
// sub-agent it comes from and the final output's mark. Print mode speaks
// no host's dialect.
func tagMeta(ev agent.Event) map[string]any {
	var m map[string]any
	if mem := ev.Member; mem != nil {
		sub := map[string]any{"id": mem.ID, "name": mem.Name, "parentToolCallId": mem.ParentToolCallID, "depth": mem.Depth}
		if mem.Background {
			sub["background"] = true
		}
		m = map[string]any{"corvid.dev/subagent": sub}
	}
	if fo := ev.FinalOutput; fo != nil {
		if m == nil {
			m = map[string]any{}
		}
		m["corvid.dev/finalOutput"] = map[string]any{"format": fo.Format}
	}
	return m
}
