package gemini

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/sse"
)

// Stream runs one streamGenerateContent request.
func (m *model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		modelID := req.Model
		if modelID == "" {
			modelID = m.cfg.Model
		}
		attemptCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		watch := llm.NewIdleWatch(m.idleTimeout(), cancel)
		defer watch.Stop()

		// fail yields what ended the attempt: the caller's cancellation
		// and the idle watch take precedence over the error they caused.
		fail := func(err error) {
			switch {
			case ctx.Err() != nil:
				yield(llm.Event{}, ctx.Err())
			case watch.Fired():
				yield(llm.Event{}, m.errStalled())
			default:
				yield(llm.Event{}, err)
			}
		}

		res, err := m.send(attemptCtx, modelID, m.request(req))
		if err != nil {
			fail(err)
			return
		}
		defer res.Body.Close()
		watch.Kick() // the headers are activity
		if res.StatusCode < 200 || res.StatusCode > 299 {
			fail(m.httpError(res))
			return
		}

		events := sse.NewReader(watch.WatchBody(res.Body))
		st := &streamState{}
		for {
			data, complete, err := events.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, sse.ErrNotSSE) {
				err = m.notSSE(data)
			} else if err != nil {
				err = m.readError(err)
			}
			if err != nil {
				fail(err)
				return
			}
			var chunk generateResponse
			if err := json.Unmarshal(data, &chunk); err != nil {
				if complete {
					fail(m.malformed())
				} else {
					fail(m.cut()) // the body ended inside an event
				}
				return
			}
			if e := chunk.Error; e != nil {
				fail(m.apiError(e.Code, e.Status, e.Message, e.retryDelay()))
				return
			}
			if evs := st.chunk(&chunk); len(evs) > 0 {
				watch.Pause()
				for _, ev := range evs {
					if !yield(ev, nil) {
						return
					}
				}
				watch.Resume()
			}
		}
		watch.Stop()
		if ctx.Err() != nil || watch.Fired() {
			fail(nil)
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

// send posts body and returns the answer's headers; its error is already
// an *llm.Error.
func (m *model) send(ctx context.Context, modelID string, body *generateRequest) (*http.Response, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, &llm.Error{Provider: "gemini", Message: "Gemini request could not be encoded: " + err.Error() + "."}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint(modelID), bytes.NewReader(raw))
	if err != nil {
		// The URL is the base URL plus a model id; neither holds the key.
		return nil, &llm.Error{Provider: "gemini", Message: fmt.Sprintf("%s base URL %q is not usable; check GEMINI_BASE_URL.", m.title, m.baseURL)}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("User-Agent", "corvid")
	hreq.Header.Set("x-goog-api-key", m.cfg.APIKey)
	llm.SetContextHeaders(hreq.Context(), hreq.Header)
	m.cfg.SetHeaders(hreq.Header)
	res, err := m.client.Do(hreq)
	if err != nil {
		return nil, m.requestError(err)
	}
	return res, nil
}

// endpoint is the streaming URL of a model: an id alone names
// models/{id}; a resource name (tunedModels/x) is used as given.
func (m *model) endpoint(modelID string) string {
	name := modelID
	if !strings.Contains(name, "/") {
		name = "models/" + name
	}
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return m.baseURL + apiVersion + "/" + strings.Join(segs, "/") + ":streamGenerateContent?alt=sse"
}

// notSSE words a body line that is not part of an event stream; a bare
// error object (some proxies send one) is reported as the error it is.
func (m *model) notSSE(line []byte) error {
	var body struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(line, &body) == nil && body.Error != nil {
		return m.apiError(body.Error.Code, body.Error.Status, body.Error.Message, body.Error.retryDelay())
	}
	return m.malformed()
}

// streamState turns response chunks into llm events. Consecutive parts of
// one kind (thought or text) continue one block; each function call is a
// block of its own.
type streamState struct {
	next      int
	cur       string
	curIdx    int
	calls     int
	finish    string
	blocked   bool
	usage     *usageMetadata
	finishMsg string
}

func (s *streamState) block(kind string) int {
	if s.cur != kind {
		s.cur, s.curIdx = kind, s.next
		s.next++
	}
	return s.curIdx
}

// appendSigned appends the events of one text or thought part: its
// signature first (so that the consumer starts a block of its own for it),
// then its text, which may be empty when the part is signed.
func appendSigned(evs []llm.Event, typ llm.EventType, idx int, text, sig string) []llm.Event {
	if sig != "" {
		evs = append(evs, llm.Event{Type: llm.EventSignature, Index: idx, Text: sig})
	}
	if text != "" || sig != "" {
		evs = append(evs, llm.Event{Type: typ, Index: idx, Text: text})
	}
	return evs
}

// blockFor is block(kind), except that a signed part always starts a new
// block.
func (s *streamState) blockFor(kind, sig string) int {
	if sig != "" {
		s.cur = ""
	}
	return s.block(kind)
}

func (s *streamState) chunk(resp *generateResponse) []llm.Event {
	var evs []llm.Event
	if resp.UsageMetadata != nil {
		s.usage = resp.UsageMetadata
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		s.blocked = true
		s.finishMsg = pf.BlockReason
	}
	if len(resp.Candidates) == 0 {
		return nil
	}
	cand := resp.Candidates[0]
	if cand.FinishReason != "" && cand.FinishReason != finishUnspecified {
		s.finish = cand.FinishReason
		s.finishMsg = cand.FinishMessage
	}
	if cand.Content == nil {
		return nil
	}
	for _, p := range cand.Content.Parts {
		sig := normalSignature(p.ThoughtSignature)
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
			input := []byte(jsonObject(p.FunctionCall.Args, json.RawMessage("{}")))
			evs = append(evs,
				llm.Event{Type: llm.EventToolUseStart, Index: idx, ToolUseID: id, ToolName: p.FunctionCall.Name},
				llm.Event{Type: llm.EventToolUseDelta, Index: idx, Text: string(input)})
			if sig != "" {
				// Before the end, so the agent has it when it closes the part.
				evs = append(evs, llm.Event{Type: llm.EventSignature, Index: idx, Text: sig})
			}
			evs = append(evs, llm.Event{Type: llm.EventToolUseEnd, Index: idx, ToolUseID: id, ToolName: p.FunctionCall.Name, Input: input})
			continue
		case p.Thought:
			idx = s.blockFor("thinking", sig)
			evs = appendSigned(evs, llm.EventThinkingDelta, idx, p.Text, sig)
		case p.Text != "" || sig != "":
			// A signed part is a block of its own, even with no text: its
			// signature must go back on that very part, never merged
			// with the text around it.
			idx = s.blockFor("text", sig)
			evs = appendSigned(evs, llm.EventTextDelta, idx, p.Text, sig)
		}
		if sig != "" {
			s.cur = "" // what follows is a new block
		}
	}
	return evs
}

// normalSignature returns a received thoughtSignature as standard padded
// base64, whatever base64 alphabet it came in; "" if it is not base64.
func normalSignature(s string) string {
	if s == "" {
		return ""
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return base64.StdEncoding.EncodeToString(b)
		}
	}
	return ""
}

// failure reports a stream that ended without a usable finish.
func (s *streamState) failure(m *model) error {
	switch {
	case s.blocked:
		return nil // a refusal, reported by end
	case s.finish == "":
		return m.cut()
	case s.finish == finishMalformedFunctionCall:
		return &llm.Error{Provider: "gemini", Retryable: true,
			Message: "Gemini produced a malformed function call; retry, or simplify the request."}
	}
	return nil
}

func (s *streamState) end() []llm.Event {
	var evs []llm.Event
	if u := s.usage; u != nil {
		evs = append(evs, llm.Event{Type: llm.EventUsage, Usage: llm.Usage{
			InputTokens:     max(0, u.PromptTokenCount-u.CachedContentTokenCount),
			OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CacheReadTokens: u.CachedContentTokenCount,
		}})
	}
	reason := llm.StopEndTurn
	switch {
	case s.blocked:
		reason = llm.StopRefusal
	case s.finish == finishMaxTokens:
		reason = llm.StopMaxTokens
	case s.finish == finishStop && s.calls > 0:
		reason = llm.StopToolUse
	case s.finish == finishStop, s.finish == finishOther:
	default: // SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, ...
		reason = llm.StopRefusal
	}
	return append(evs, llm.Event{Type: llm.EventStop, StopReason: reason})
}
