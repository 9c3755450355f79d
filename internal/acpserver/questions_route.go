package acpserver

import (
	"context"
	"strings"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/respond"
	"github.com/corvid-agent/corvid/internal/tool"
)

// The three kinds of question of a shared session (questions.go), each as
// route puts it.

// anyClient: every connected client that answers requests can answer a
// permission or a choice (holders.present leaves out those that cannot).
func anyClient(*session) bool { return true }

// routePermission asks every holder and corvid respond; no answer is a
// denial.
func (ss *session) routePermission(ctx context.Context, call agent.ToolCall) agent.Answer {
	v, ok := ss.route(ctx, ss.permissionRouted(call))
	if !ok {
		return agent.RejectOnce
	}
	return v.(agent.Answer)
}

// permissionRouted is how route puts a permission question.
func (ss *session) permissionRouted(call agent.ToolCall) routed {
	return routed{
		toolCallID: call.ID, title: call.Title, can: anyClient, share: ss.sharePermission(call),
		ask: func(ctx context.Context, t *session) (any, bool) {
			a, err := t.askClient(ctx, call)
			return a, err == nil
		},
		respond: &respond.Question{SessionID: ss.id, Title: call.Title, Detail: permissionDetail(call), Cwd: ss.Cwd()},
		notice:  func(rq respond.Question) string { return permissionNotice(call, rq.ID, ss.srv.opts.InteractionTimeout) },
		fromRespond: func(a respond.Answer) any {
			switch a {
			case respond.Allow:
				return agent.AllowOnce
			case respond.Always:
				return agent.AllowAlways
			}
			return agent.RejectOnce
		},
	}
}

// routeChoice asks a single-choice question (ask_user, exit_plan) of every
// holder, as session/request_permission, and of corvid respond.
func (ss *session) routeChoice(ctx context.Context, q tool.ChoiceQuestion) (string, error) {
	v, ok := ss.route(ctx, ss.choiceRouted(q))
	switch {
	case ok:
		return v.(string), nil
	case ctx.Err() != nil:
		return "", ctx.Err()
	}
	return "", tool.ErrNoAnswer
}

// choiceRouted is how route puts a single-choice question.
func (ss *session) choiceRouted(q tool.ChoiceQuestion) routed {
	labels := make([]string, 0, len(q.Choices)+1)
	for _, c := range q.Choices {
		labels = append(labels, c.Label)
	}
	labels = append(labels, dontAnswer)
	title, _, _ := strings.Cut(strings.TrimSpace(q.Text), "\n")
	if title == "" {
		title = q.Title
	}
	req := choiceRequest(ss.id, q)
	return routed{
		toolCallID: q.ToolCallID, title: title, can: anyClient, share: ss.shareChoice(q),
		ask: func(ctx context.Context, t *session) (any, bool) {
			var resp acp.RequestPermissionResponse
			if err := t.srv.conn.Call(ctx, "session/request_permission", req, &resp); err != nil {
				return nil, false
			}
			picked := choiceAnswer(q, resp)
			// Another option than those offered is no answer.
			valid := picked != "" || resp.Outcome.Outcome == "cancelled" || resp.Outcome.OptionID == dismissOption
			return picked, valid
		},
		respond: &respond.Question{SessionID: ss.id, Title: title, Detail: q.Text, Cwd: ss.Cwd(), Choices: labels},
		notice:  func(rq respond.Question) string { return choiceNotice(q.Text, rq, ss.srv.opts.InteractionTimeout) },
		fromRespond: func(a respond.Answer) any {
			for _, c := range q.Choices {
				if c.Label == string(a) {
					return c.ID
				}
			}
			return "" // Don't answer
		},
	}
}

// routeElicit sends elicitation/create to every holder whose client
// advertised the question's mode; corvid respond cannot answer a form.
func (ss *session) routeElicit(ctx context.Context, e tool.Elicitation) (tool.ElicitResult, error) {
	can := func(t *session) bool {
		form, url := t.srv.elicitCaps()
		return (e.Mode == "form" && form) || (e.Mode == "url" && url)
	}
	if !ss.anyHolder(can) {
		return tool.ElicitResult{}, tool.ErrCannotAsk
	}
	req := elicitRequest(ss.id, e)
	v, ok := ss.route(ctx, routed{
		toolCallID: e.ToolCallID, title: e.Message, can: can,
		ask: func(ctx context.Context, t *session) (any, bool) {
			var resp acp.CreateElicitationResponse
			if err := t.srv.conn.Call(ctx, "elicitation/create", req, &resp); err != nil {
				return nil, false
			}
			switch resp.Action {
			case "accept", "decline", "cancel":
				return tool.ElicitResult{Action: resp.Action, Content: resp.Content}, true
			}
			return nil, false
		},
	})
	switch {
	case ok:
		return v.(tool.ElicitResult), nil
	case ctx.Err() != nil:
		return tool.ElicitResult{}, ctx.Err()
	}
	return tool.ElicitResult{}, tool.ErrNoAnswer
}
