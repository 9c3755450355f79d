package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"strconv"
	"strings"
	"syscall"

	"google.golang.org/genai"

	"github.com/corvid-agent/corvid/internal/llm"
)

// streamState turns response chunks into llm events. Consecutive parts of
// one kind (thought or text) continue one block; each function call is a
// block of its own.
type streamState struct {
	next      int
	cur       string
	curIdx    int
	calls     int
	finish    genai.FinishReason
	blocked   bool
	usage     *genai.GenerateContentResponseUsageMetadata
	finishMsg string
}

func (s *streamState) block(kind string) int {
	if s.cur != kind {
		s.cur, s.curIdx = kind, s.next
		s.next++
	}
	return s.curIdx
}

// Stream runs one streamGenerateContent request.
func (m *model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		model := req.Model
		if model == "" {
			model = m.cfg.Model
		}
		attemptCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		watch := newIdleWatch(m.idleTimeout(), cancel)
		defer watch.stop()
		fail := &failure{}
		rctx := context.WithValue(context.WithValue(attemptCtx, failureKey{}, fail), watchKey{}, watch)
		contents, cfg := m.request(req)
		st := &streamState{}
		for resp, err := range m.client.Models.GenerateContentStream(rctx, model, contents, cfg) {
			if err != nil {
				switch {
				case ctx.Err() != nil:
					yield(llm.Event{}, ctx.Err())
				case watch.fired():
					yield(llm.Event{}, m.errStalled())
				default:
					yield(llm.Event{}, m.wrap(ctx, err, fail))
				}
				return
			}
			if evs := st.chunk(resp); len(evs) > 0 {
				watch.pause()
				for _, ev := range evs {
					if !yield(ev, nil) {
						return
					}
				}
				watch.resume()
			}
		}
		watch.stop()
		switch {
		case ctx.Err() != nil:
			yield(llm.Event{}, ctx.Err())
			return
		case watch.fired():
			yield(llm.Event{}, m.errStalled())
			return
		}
		if err := st.failure(m); err != nil {
			yield(llm.Event{}, err)
			return
		}
		for _, ev := range st.end() {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (s *streamState) chunk(resp *genai.GenerateContentResponse) []llm.Event {
	var evs []llm.Event
	if resp.UsageMetadata != nil {
		s.usage = resp.UsageMetadata
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		s.blocked = true
		s.finishMsg = string(pf.BlockReason)
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return nil
	}
	cand := resp.Candidates[0]
	if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
		s.finish = cand.FinishReason
		s.finishMsg = cand.FinishMessage
	}
	if cand.Content == nil {
		return nil
	}
	for _, p := range cand.Content.Parts {
		if p == nil {
			continue
		}
		idx := -1
		switch {
		case p.FunctionCall != nil:
			s.cur = ""
			idx = s.next
			s.next++
			s.calls++
			id := p.FunctionCall.ID
			if id == "" {
				id = fmt.Sprintf("%s%d", generatedIDPrefix, idx)
			}
			args := p.FunctionCall.Args
			if args == nil {
				args = map[string]any{}
			}
			input, _ := json.Marshal(args)
			evs = append(evs,
				llm.Event{Type: llm.EventToolUseStart, Index: idx, ToolUseID: id, ToolName: p.FunctionCall.Name},
				llm.Event{Type: llm.EventToolUseDelta, Index: idx, Text: string(input)})
			if len(p.ThoughtSignature) > 0 {
				// Before the end, so the agent has it when it closes the part.
				evs = append(evs, llm.Event{Type: llm.EventSignature, Index: idx, Text: base64.StdEncoding.EncodeToString(p.ThoughtSignature)})
			}
			evs = append(evs, llm.Event{Type: llm.EventToolUseEnd, Index: idx, ToolUseID: id, ToolName: p.FunctionCall.Name, Input: input})
			continue
		case p.Thought:
			idx = s.block("thinking")
			if p.Text != "" {
				evs = append(evs, llm.Event{Type: llm.EventThinkingDelta, Index: idx, Text: p.Text})
			}
		case p.Text != "" || len(p.ThoughtSignature) > 0:
			idx = s.block("text")
			if p.Text != "" {
				evs = append(evs, llm.Event{Type: llm.EventTextDelta, Index: idx, Text: p.Text})
			}
		}
		if idx >= 0 && len(p.ThoughtSignature) > 0 {
			evs = append(evs, llm.Event{Type: llm.EventSignature, Index: idx, Text: base64.StdEncoding.EncodeToString(p.ThoughtSignature)})
		}
	}
	return evs
}

// failure reports a stream that ended without a usable finish.
func (s *streamState) failure(m *model) error {
	switch {
	case s.blocked:
		return nil // a refusal, reported by end
	case s.finish == "":
		return m.cut()
	case s.finish == genai.FinishReasonMalformedFunctionCall:
		return &llm.Error{Provider: "gemini", Retryable: true,
			Message: "Gemini produced a malformed function call; retry, or simplify the request."}
	}
	return nil
}

func (s *streamState) end() []llm.Event {
	var evs []llm.Event
	if u := s.usage; u != nil {
		cached := int64(u.CachedContentTokenCount)
		evs = append(evs, llm.Event{Type: llm.EventUsage, Usage: llm.Usage{
			InputTokens:     max(0, int64(u.PromptTokenCount)-cached),
			OutputTokens:    int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
			CacheReadTokens: cached,
		}})
	}
	reason := llm.StopEndTurn
	switch {
	case s.blocked:
		reason = llm.StopRefusal
	case s.finish == genai.FinishReasonMaxTokens:
		reason = llm.StopMaxTokens
	case s.finish == genai.FinishReasonStop && s.calls > 0:
		reason = llm.StopToolUse
	case s.finish == genai.FinishReasonStop, s.finish == genai.FinishReasonOther:
	default: // SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, ...
		reason = llm.StopRefusal
	}
	return append(evs, llm.Event{Type: llm.EventStop, StopReason: reason})
}

func (m *model) cut() error {
	return &llm.Error{Provider: "gemini", Retryable: true,
		Message: "Gemini closed the stream before the response was complete; retry."}
}

// wrap converts a genai failure into what Stream yields: ctx.Err() once
// the context is done, else an *llm.Error.
func (m *model) wrap(ctx context.Context, err error, f *failure) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae genai.APIError
	if errors.As(err, &ae) {
		f.mu.Lock()
		status, after := f.status, f.retryAfter
		f.mu.Unlock()
		if status == 0 {
			status = ae.Code // an error inside the stream
		}
		e := &llm.Error{
			Provider:  "gemini",
			Status:    status,
			Retryable: status == 429 || status >= 500 || ae.Status == "RESOURCE_EXHAUSTED" || ae.Status == "UNAVAILABLE" || ae.Status == "INTERNAL",
			Message:   m.message(status, ae.Status, ae.Message),
		}
		if e.Retryable {
			return llm.RetryAfterHint(e, after)
		}
		return e
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "error unmarshalling data"), strings.Contains(msg, "invalid stream chunk"):
		return &llm.Error{Provider: "gemini", Retryable: true,
			Message: fmt.Sprintf("Gemini sent a malformed stream event; retry, and check the base URL %s if it persists.", m.baseURL)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &llm.Error{Provider: "gemini", Message: fmt.Sprintf("Gemini is not reachable at %s (connection refused).", m.baseURL)}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return m.cut()
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return &llm.Error{Provider: "gemini", Retryable: true,
			Message: fmt.Sprintf("Gemini could not be reached at %s; check the network and retry.", m.baseURL)}
	}
	return &llm.Error{Provider: "gemini", Retryable: true, Message: "Gemini request failed: " + m.redact(msg) + "."}
}

func (m *model) message(status int, code, text string) string {
	var b strings.Builder
	b.WriteString(m.title)
	if status > 0 {
		b.WriteString(" returned " + strconv.Itoa(status))
	} else {
		b.WriteString(" reported an error")
	}
	if code != "" {
		b.WriteString(" " + code)
	}
	text = strings.TrimSpace(m.redact(text))
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	if text != "" {
		b.WriteString(": " + strings.TrimRight(text, "."))
	}
	switch {
	case status == 401 || status == 403 || strings.Contains(strings.ToLower(text), "api key"):
		fmt.Fprintf(&b, "; check %s or run `corvid auth login gemini`", strings.Join(m.keyVars, " or "))
	case status == 404:
		fmt.Fprintf(&b, "; check the model id %q", m.cfg.Model)
	case status == 429:
		b.WriteString("; wait and retry, or check your quota")
	}
	b.WriteString(".")
	return b.String()
}

func (m *model) redact(s string) string {
	if k := m.cfg.APIKey; len(k) >= 4 {
		s = strings.ReplaceAll(s, k, "[redacted]")
	}
	return s
}
