package acpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/tool"
)

// A session is the tool.Asker of its agent session: ask_user and MCP
// servers' elicitations reach the user through it (docs/elicitation.md).
var _ tool.Asker = (*session)(nil)

// ElicitModes reports the elicitation modes the client advertised; a
// client that cannot answer requests at all (Gas City) shows none.
// Under serve, a mode counts when a connected client holding the session
// advertised it (questions.go).
func (ss *session) ElicitModes() (form, url bool) {
	if ss.shared() {
		for _, t := range ss.holders.present() {
			f, u := t.srv.elicitCaps()
			form, url = form || f, url || u
		}
		return form, url
	}
	return ss.srv.elicitCaps()
}

// Elicit sends elicitation/create in session scope. A mode the client did
// not advertise is never sent (ErrCannotAsk). Cancelling ctx (session/cancel)
// withdraws the question with $/cancel_request (acp.Conn.Call); no answer
// within the interaction timeout withdraws it too and is ErrNoAnswer.
func (ss *session) Elicit(ctx context.Context, e tool.Elicitation) (tool.ElicitResult, error) {
	if ss.shared() {
		return ss.routeElicit(ctx, e) // serve (questions.go)
	}
	form, url := ss.ElicitModes()
	if !(e.Mode == "form" && form) && !(e.Mode == "url" && url) {
		return tool.ElicitResult{}, tool.ErrCannotAsk
	}
	var resp acp.CreateElicitationResponse
	if err := ss.call(ctx, "elicitation/create", elicitRequest(ss.id, e), &resp); err != nil {
		return tool.ElicitResult{}, err
	}
	if resp.Action == "" {
		return tool.ElicitResult{}, fmt.Errorf("the client answered elicitation/create without an action")
	}
	return tool.ElicitResult{Action: resp.Action, Content: resp.Content}, nil
}

// elicitRequest is elicitation/create's params for e.
func elicitRequest(sid string, e tool.Elicitation) acp.CreateElicitationRequest {
	req := acp.CreateElicitationRequest{SessionID: sid, ToolCallID: e.ToolCallID, Mode: e.Mode, Message: e.Message}
	if e.Mode == "form" {
		req.RequestedSchema = e.Schema
	} else {
		req.ElicitationID, req.URL = e.ID, e.URL
	}
	return req
}

// CompleteElicitation sends elicitation/complete for a url-mode question.
func (ss *session) CompleteElicitation(id string) {
	if ss.shared() {
		for _, t := range ss.holders.present() {
			if _, url := t.srv.elicitCaps(); url {
				_ = t.srv.conn.Notify("elicitation/complete", acp.CompleteElicitationNotification{ElicitationID: id})
			}
		}
		return
	}
	_ = ss.srv.conn.Notify("elicitation/complete", acp.CompleteElicitationNotification{ElicitationID: id})
}

// dismissOption is the permission option that answers a choice question
// with nothing.
const dismissOption = "_corvid_dismiss"

// Choose asks a single-choice question as session/request_permission whose
// options are the choices (kind allow_once), plus one reject_once option to
// leave it unanswered; a host that cannot answer requests gets it out of
// band (corvid respond).
func (ss *session) Choose(ctx context.Context, q tool.ChoiceQuestion) (string, error) {
	if ss.shared() || ss.sharesAcross() {
		return ss.routeChoice(ctx, q) // serve, or a shared store (questions.go)
	}
	if ss.srv.cannotAnswer() || ss.srv.keepsTurns() {
		// keepsTurns: a turn that outlived its client (serve).
		return ss.chooseOutOfBand(ctx, q)
	}
	var resp acp.RequestPermissionResponse
	if err := ss.call(ctx, "session/request_permission", choiceRequest(ss.id, q), &resp); err != nil {
		if ctx.Err() == nil && ss.srv.keepsTurns() {
			return ss.chooseOutOfBand(ctx, q) // the client left while asked
		}
		return "", err
	}
	return choiceAnswer(q, resp), nil
}

// choiceRequest asks q as session/request_permission.
func choiceRequest(sid string, q tool.ChoiceQuestion) acp.RequestPermissionRequest {
	text := acp.TextBlock(truncateText(q.Text))
	req := acp.RequestPermissionRequest{SessionID: sid, ToolCall: acp.ToolCallUpdate{ToolCallID: q.ToolCallID, Title: q.Title, Kind: string(tool.KindOther),
		Content: []acp.ToolCallContent{{Type: "content", Content: &text}}}}
	for _, c := range q.Choices {
		req.Options = append(req.Options, acp.PermissionOption{OptionID: c.ID, Name: c.Label, Kind: "allow_once"})
	}
	req.Options = append(req.Options, acp.PermissionOption{OptionID: dismissOption, Name: "Don't answer", Kind: "reject_once"})
	return req
}

// choiceAnswer is the choice an answer picked ("": none).
func choiceAnswer(q tool.ChoiceQuestion, resp acp.RequestPermissionResponse) string {
	if resp.Outcome.Outcome != "selected" {
		return ""
	}
	for _, c := range q.Choices {
		if c.ID == resp.Outcome.OptionID {
			return c.ID
		}
	}
	return ""
}

// call sends a question to the client, bounded by the interaction timeout:
// the turn's cancel is returned as ctx's error, the timeout as ErrNoAnswer.
func (ss *session) call(ctx context.Context, method string, params, result any) error {
	qctx := ctx
	if t := ss.srv.opts.InteractionTimeout; t > 0 {
		var cancel context.CancelFunc
		qctx, cancel = context.WithTimeoutCause(ctx, t, tool.ErrNoAnswer)
		defer cancel()
	}
	err := ss.srv.conn.Call(qctx, method, params, result)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(context.Cause(qctx), tool.ErrNoAnswer):
		return tool.ErrNoAnswer
	}
	return fmt.Errorf("%s: %w", method, err)
}
