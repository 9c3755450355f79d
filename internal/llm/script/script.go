// Package script is a model that plays a scripted conversation from a JSON
// file: `corvid acp -m script:FILE`. It needs no network and no key, so it is
// what corvid runs offline, what the tests drive, and a predictable agent for
// people who write ACP clients. The format is documented in
// docs/script-format.md; examples live under examples/.
//
// The script is stateless per conversation: the N-th model call of a session
// (N = the number of assistant messages already in the request) plays
// response N. So concurrent sessions, and a session loaded in a new process,
// each get the same deterministic sequence.
package script

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/llm"
)

// Register adds the scripted provider ("script") to r.
func Register(r *llm.Registry) { r.Register("script", New) }

// Script is the file format.
type Script struct {
	// Defaults for every response.
	ChunkSize int `json:"chunkSize,omitempty"`
	DelayMs   int `json:"delayMs,omitempty"`
	// When the responses run out: "repeat-last", "cycle", or "" (answer with
	// a short end_turn text saying the script is exhausted).
	OnExhausted string     `json:"onExhausted,omitempty"`
	Responses   []Response `json:"responses"`
	// Model metadata reported to the agent.
	ContextWindow int64 `json:"contextWindow,omitempty"`
	Images        bool  `json:"images,omitempty"`
}

// Response is one model call's output.
type Response struct {
	Parts      []Part     `json:"parts"`
	ChunkSize  int        `json:"chunkSize,omitempty"`
	DelayMs    int        `json:"delayMs,omitempty"`
	Usage      *llm.Usage `json:"usage,omitempty"`
	StopReason string     `json:"stopReason,omitempty"` // default: tool_use if any tool call, else end_turn
	Error      *Error     `json:"error,omitempty"`
}

// Part is one content block of a response.
type Part struct {
	Type   string          `json:"type"` // text, thinking, tool_call
	Text   string          `json:"text,omitempty"`
	Repeat int             `json:"repeat,omitempty"` // text repeated this many times
	ID     string          `json:"id,omitempty"`
	Name   string          `json:"name,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
}

// Error is an injected failure.
type Error struct {
	Message   string `json:"message"`
	Status    int    `json:"status,omitempty"`
	Retryable bool   `json:"retryable,omitempty"`
	// AfterParts streams this many parts first (0: fail before any output).
	AfterParts int `json:"afterParts,omitempty"`
}

// Load reads and checks a script file.
func Load(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	return Parse(b)
}

// Parse decodes and checks a script.
func Parse(b []byte) (*Script, error) {
	var s Script
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	for i, r := range s.Responses {
		for j, p := range r.Parts {
			switch p.Type {
			case "text", "thinking":
			case "tool_call":
				if p.Name == "" {
					return nil, fmt.Errorf("script response %d part %d: tool_call needs a name", i, j)
				}
				if len(p.Input) > 0 && !json.Valid(p.Input) {
					return nil, fmt.Errorf("script response %d part %d: input is not JSON", i, j)
				}
			default:
				return nil, fmt.Errorf("script response %d part %d: unknown type %q (want text, thinking or tool_call)", i, j, p.Type)
			}
		}
	}
	return &s, nil
}

// Model plays a Script.
type Model struct {
	script *Script
	info   llm.ModelInfo
}

// New opens the script named by cfg.Model (a file path).
func New(cfg llm.ProviderConfig) (llm.Model, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("script model needs a file: -m script:FILE")
	}
	s, err := Load(cfg.Model)
	if err != nil {
		return nil, err
	}
	return NewModel(s, cfg.Model), nil
}

// NewModel returns a model playing s.
func NewModel(s *Script, name string) *Model {
	info := llm.ModelInfo{ID: "script:" + name, ContextWindow: 200000, MaxOutput: 32000, Images: s.Images, Reasoning: true}
	if s.ContextWindow > 0 {
		info.ContextWindow = s.ContextWindow
	}
	return &Model{script: s, info: info}
}

// Info describes the scripted model.
func (m *Model) Info() llm.ModelInfo { return m.info }

func (m *Model) pick(req llm.Request) (Response, int) {
	n := 0
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleAssistant {
			n++
		}
	}
	rs := m.script.Responses
	switch {
	case n < len(rs):
		return rs[n], n
	case len(rs) > 0 && m.script.OnExhausted == "repeat-last":
		return rs[len(rs)-1], n
	case len(rs) > 0 && m.script.OnExhausted == "cycle":
		return rs[n%len(rs)], n
	}
	return Response{Parts: []Part{{Type: "text", Text: "(The script has no more responses.)"}}}, n
}

// Stream plays the response for this point of the conversation.
func (m *Model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		r, n := m.pick(req)
		pl := &player{ctx: ctx, yield: yield,
			chunk: firstPositive(r.ChunkSize, m.script.ChunkSize, 1<<30),
			delay: time.Duration(firstPositive(r.DelayMs, m.script.DelayMs, 0)) * time.Millisecond}
		fail := func() {
			e := r.Error
			yield(llm.Event{}, &llm.Error{Provider: "script", Status: e.Status, Retryable: e.Retryable, Message: e.Message})
		}
		sawTool := false
		for i, p := range r.Parts {
			if r.Error != nil && i == r.Error.AfterParts {
				fail()
				return
			}
			ok := true
			switch p.Type {
			case "text", "thinking":
				ok = pl.text(i, p)
			case "tool_call":
				sawTool = true
				ok = pl.toolCall(n, i, p)
			}
			if !ok {
				return
			}
		}
		if r.Error != nil {
			fail()
			return
		}
		pl.finish(r, req, sawTool)
	}
}

// player streams one response's parts, paced by delay between chunks.
type player struct {
	ctx   context.Context
	yield func(llm.Event, error) bool
	chunk int
	delay time.Duration
	timer *time.Timer
}

// wait sleeps the delay; false once ctx ended (reported to the consumer).
func (pl *player) wait() bool {
	if pl.delay <= 0 {
		if pl.ctx.Err() != nil {
			pl.yield(llm.Event{}, pl.ctx.Err())
			return false
		}
		return true
	}
	if pl.timer == nil {
		pl.timer = time.NewTimer(pl.delay)
	} else {
		pl.timer.Reset(pl.delay)
	}
	select {
	case <-pl.ctx.Done():
		pl.yield(llm.Event{}, pl.ctx.Err())
		return false
	case <-pl.timer.C:
		return true
	}
}

// text streams a text or thinking part in chunks; false to stop.
func (pl *player) text(i int, p Part) bool {
	typ := llm.EventTextDelta
	if p.Type == "thinking" {
		typ = llm.EventThinkingDelta
	}
	for piece := range pieces(p.Text, p.Repeat, pl.chunk) {
		if !pl.wait() {
			return false
		}
		if !pl.yield(llm.Event{Type: typ, Index: i, Text: piece}, nil) {
			return false
		}
	}
	if p.Type == "thinking" {
		return pl.yield(llm.Event{Type: llm.EventSignature, Index: i, Text: "script"}, nil)
	}
	return true
}

// toolCall streams a tool call part of response n; false to stop.
func (pl *player) toolCall(n, i int, p Part) bool {
	if !pl.wait() {
		return false
	}
	id := p.ID
	if id == "" {
		id = fmt.Sprintf("call_%d_%d", n, i)
	}
	input := p.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return pl.yield(llm.Event{Type: llm.EventToolUseStart, Index: i, ToolUseID: id, ToolName: p.Name}, nil) &&
		pl.yield(llm.Event{Type: llm.EventToolUseDelta, Index: i, Text: string(input)}, nil) &&
		pl.yield(llm.Event{Type: llm.EventToolUseEnd, Index: i, ToolUseID: id, ToolName: p.Name, Input: input}, nil)
}

// finish reports usage and the stop reason.
func (pl *player) finish(r Response, req llm.Request, sawTool bool) {
	usage := llm.Usage{InputTokens: estimateTokens(req), OutputTokens: 1}
	if r.Usage != nil {
		usage = *r.Usage
	}
	if !pl.yield(llm.Event{Type: llm.EventUsage, Usage: usage}, nil) {
		return
	}
	stop := llm.StopReason(r.StopReason)
	if stop == "" {
		stop = llm.StopEndTurn
		if sawTool {
			stop = llm.StopToolUse
		}
	}
	pl.yield(llm.Event{Type: llm.EventStop, StopReason: stop}, nil)
}

// pieces splits text repeated repeat times (at least once) into pieces of
// chunk runes, the last one shorter: what cutting strings.Repeat(text,
// repeat) would give, built as each piece is asked for rather than the
// whole repeated text first. A large repeat thus starts streaming at
// once, like a provider whose first event does not wait for the whole
// answer. A piece within one copy of text is a substring of it.
func pieces(text string, repeat, chunk int) iter.Seq[string] {
	return func(yield func(string) bool) {
		repeat, chunk = max(repeat, 1), max(chunk, 1)
		if !utf8.ValidString(text) {
			// A rune could span two copies: cut the repeated text itself.
			rest := strings.Repeat(text, repeat)
			for len(rest) > 0 {
				piece := cut(rest, chunk)
				rest = rest[len(piece):]
				if !yield(piece) {
					return
				}
			}
			return
		}
		runes := utf8.RuneCountInString(text)
		// The next piece starts at byte at of copy done+1.
		at, done := 0, 0
		for done < repeat && len(text) > 0 {
			piece, n := take(text[at:], chunk)
			if at += len(piece); at == len(text) {
				at, done = 0, done+1
			}
			if need := chunk - n; need > 0 && done < repeat {
				// The piece goes on into the next copies: whole ones, then
				// the head of one. Sized exactly, so a long answer streams
				// without garbage beyond its own pieces.
				copies := min(need/runes, repeat-done)
				var head string
				if rest := need - copies*runes; rest > 0 && done+copies < repeat {
					head, _ = take(text, rest)
				}
				var b strings.Builder
				b.Grow(len(piece) + copies*len(text) + len(head))
				b.WriteString(piece)
				for range copies {
					b.WriteString(text)
				}
				done += copies
				if head != "" {
					b.WriteString(head)
					at = len(head)
				}
				piece = b.String()
			}
			if !yield(piece) {
				return
			}
		}
	}
}

// take returns the first n runes of s, or all of s when it has fewer, and
// how many runes that is.
func take(s string, n int) (string, int) {
	i, k := 0, 0
	for ; k < n && i < len(s); k++ {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i], k
}

// cut returns the first n runes of s (n bytes would split UTF-8).
func cut(s string, n int) string {
	if n >= len(s) {
		return s
	}
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// estimateTokens is a rough count (4 bytes a token) so the context meter moves.
func estimateTokens(req llm.Request) int64 {
	n := len(req.System)
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			n += len(p.Text) + len(p.Input) + len(p.Data)
		}
	}
	return int64(n/4 + 1)
}

func firstPositive(v ...int) int {
	for _, x := range v {
		if x > 0 {
			return x
		}
	}
	return 0
}
