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
func (ss *session) ElicitModes() (form, url bool) {
	if a := ss.holders.askerFor(ss); a != ss {
		return a.ElicitModes() // another connection prompted (attach.go)
	}
	s := ss.srv
	if s.cannotAnswer() {
		return false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clientCaps == nil || s.clientCaps.Elicitation == nil {
		return false, false
	}
	el := s.clientCaps.Elicitation
	return el.Form != nil, el.URL != nil
}

// Elicit sends elicitation/create in session scope. A mode the client did
// not advertise is never sent (ErrCannotAsk). Cancelling ctx (session/cancel)
// withdraws the question with $/cancel_request (acp.Conn.Call); no answer
// within the interaction timeout withdraws it too and is ErrNoAnswer.
func (ss *session) Elicit(ctx context.Context, e tool.Elicitation) (tool.ElicitResult, error) {
	if a := ss.holders.askerFor(ss); a != ss {
		return a.Elicit(ctx, e) // another connection prompted (attach.go)
	}
	form, url := ss.ElicitModes()
	req := acp.CreateElicitationRequest{SessionID: ss.id, ToolCallID: e.ToolCallID, Mode: e.Mode, Message: e.Message}
	switch {
	case e.Mode == "form" && form:
		req.RequestedSchema = e.Schema
	case e.Mode == "url" && url:
		req.ElicitationID, req.URL = e.ID, e.URL
	default:
		return tool.ElicitResult{}, tool.ErrCannotAsk
	}
	var resp acp.CreateElicitationResponse
	if err := ss.call(ctx, "elicitation/create", req, &resp); err != nil {
		return tool.ElicitResult{}, err
	}
	if resp.Action == "" {
		return tool.ElicitResult{}, fmt.Errorf("the client answered elicitation/create without an action")
	}
	return tool.ElicitResult{Action: resp.Action, Content: resp.Content}, nil
}

// CompleteElicitation sends elicitation/complete for a url-mode question.
func (ss *session) CompleteElicitation(id string) {
	if a := ss.holders.askerFor(ss); a != ss {
		a.CompleteElicitation(id)
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
	if a := ss.holders.askerFor(ss); a != ss {
		return a.Choose(ctx, q) // another connection prompted (attach.go)
	}
	if ss.srv.cannotAnswer() || ss.srv.keepsTurns() {
		// keepsTurns: a turn that outlived its client (serve).
		return ss.chooseOutOfBand(ctx, q)
	}
	text := acp.TextBlock(truncateText(q.Text))
	req := acp.RequestPermissionRequest{SessionID: ss.id, ToolCall: acp.ToolCallUpdate{ToolCallID: q.ToolCallID, Title: q.Title, Kind: string(tool.KindOther),
		Content: []acp.ToolCallContent{{Type: "content", Content: &text}}}}
	for _, c := range q.Choices {
		req.Options = append(req.Options, acp.PermissionOption{OptionID: c.ID, Name: c.Label, Kind: "allow_once"})
	}
	req.Options = append(req.Options, acp.PermissionOption{OptionID: dismissOption, Name: "Don't answer", Kind: "reject_once"})
	var resp acp.RequestPermissionResponse
	if err := ss.call(ctx, "session/request_permission", req, &resp); err != nil {
		if ctx.Err() == nil && ss.srv.keepsTurns() {
			return ss.chooseOutOfBand(ctx, q) // the client left while asked
		}
		return "", err
	}
	if resp.Outcome.Outcome != "selected" {
		return "", nil
	}
	for _, c := range q.Choices {
		if c.ID == resp.Outcome.OptionID {
			return c.ID, nil
		}
	}
	return "", nil
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
