package testkit

import (
	"context"
	"encoding/json"
)

// ElicitationHandler answers elicitation/create with a CreateElicitationResponse value.
// ctx ends when the agent withdraws the request with $/cancel_request or the editor
// shuts down; unlike a permission request, session/cancel alone does not end it (the
// agent must withdraw its question itself).
type ElicitationHandler func(ctx context.Context, params json.RawMessage) (any, error)

// ElicitationCall records one elicitation/create and, once answered, the answer.
type ElicitationCall struct {
	SessionID  string
	ToolCallID string
	Mode       string
	Message    string
	Schema     json.RawMessage // requestedSchema (form mode)
	URL        string
	ID         string // elicitationId (url mode)
	Raw        json.RawMessage
	Answered   bool
	// Withdrawn: the agent sent $/cancel_request for it before it was answered.
	Withdrawn bool
	Answer    any
}

// AcceptElicitation answers accept with content.
func AcceptElicitation(content map[string]any) ElicitationHandler {
	return func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"action": "accept", "content": content}, nil
	}
}

// DeclineElicitation answers decline (the default).
func DeclineElicitation() ElicitationHandler {
	return func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"action": "decline"}, nil
	}
}

// CancelElicitation answers cancel (the user dismissed the form).
func CancelElicitation() ElicitationHandler {
	return func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"action": "cancel"}, nil
	}
}

// HoldElicitation holds each request until the agent withdraws it (or the editor shuts
// down), then answers cancel: a user who never answers.
func HoldElicitation() ElicitationHandler {
	return func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-ctx.Done()
		return map[string]any{"action": "cancel"}, nil
	}
}

func (e *Editor) serveElicitation(ctx context.Context, m Message) (any, *RPCError) {
	var p struct {
		SessionID  string          `json:"sessionId"`
		ToolCallID string          `json:"toolCallId"`
		Mode       string          `json:"mode"`
		Message    string          `json:"message"`
		Schema     json.RawMessage `json:"requestedSchema"`
		URL        string          `json:"url"`
		ID         string          `json:"elicitationId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	call := &ElicitationCall{SessionID: p.SessionID, ToolCallID: p.ToolCallID, Mode: p.Mode, Message: p.Message,
		Schema: p.Schema, URL: p.URL, ID: p.ID, Raw: m.Params}
	e.mu.Lock()
	e.elicits = append(e.elicits, call)
	e.broadcastLocked()
	e.mu.Unlock()
	h := e.opts.Elicitation
	if h == nil {
		h = DeclineElicitation()
	}
	res, err := h(ctx, m.Params)
	e.mu.Lock()
	call.Answered, call.Answer, call.Withdrawn = true, res, ctx.Err() != nil
	e.broadcastLocked()
	e.mu.Unlock()
	if err != nil {
		return nil, &RPCError{Code: CodeInternalError, Message: err.Error()}
	}
	return res, nil
}

// Elicitations returns every elicitation/create so far (answered or still held).
func (e *Editor) Elicitations() []ElicitationCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]ElicitationCall, len(e.elicits))
	for i, c := range e.elicits {
		out[i] = *c
	}
	return out
}

// ElicitationsAnswered waits until every elicitation/create so far has been
// answered or withdrawn and returns them all. The editor answers on its own
// goroutine, so a withdrawal ($/cancel_request) may be recorded just after
// the prompt's response arrived.
func (e *Editor) ElicitationsAnswered(ctx context.Context) ([]ElicitationCall, error) {
	err := e.waitFor(ctx, func() bool {
		for _, c := range e.elicits {
			if !c.Answered {
				return false
			}
		}
		return true
	})
	return e.Elicitations(), err
}

// WaitElicitation waits for the next elicitation/create that WaitElicitation has not
// returned yet (it may already have arrived).
func (e *Editor) WaitElicitation(ctx context.Context) (ElicitationCall, error) {
	var got ElicitationCall
	err := e.waitFor(ctx, func() bool {
		if e.elicitCursor < len(e.elicits) {
			got = *e.elicits[e.elicitCursor]
			e.elicitCursor++
			return true
		}
		return false
	})
	return got, err
}
