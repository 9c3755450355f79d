package acpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/respond"
	"github.com/corvid-agent/corvid/internal/tool"
)

var errNoControlDir = errors.New("no control socket directory configured")

// broker opens the control socket on first use (ARCHITECTURE.md §3: hosts that
// cannot answer permission requests).
func (s *Server) broker() (*respond.Broker, error) {
	if h := s.opts.Hub; h != nil {
		// One for the daemon: its questions outlive their connections.
		return h.broker(s.opts.RespondPlace, s.log)
	}
	s.brokerOnce.Do(func() {
		if s.opts.RespondPlace.Dir == "" {
			s.brokerErr = errNoControlDir
			return
		}
		s.brk, s.brokerErr = respond.Listen(s.opts.RespondPlace, s.log)
	})
	return s.brk, s.brokerErr
}

// askOutOfBand writes the question into the conversation, keeps the turn
// open, and waits for `corvid respond ID allow|always|deny`. No answer
// within the interaction timeout is a denial, never consent.
func (ss *session) askOutOfBand(ctx context.Context, call agent.ToolCall) (agent.Answer, error) {
	say := ss.say
	b, err := ss.srv.broker()
	if err != nil {
		ss.srv.log.Error("control socket", "err", err)
		say(fmt.Sprintf("\n\n[corvid] Tool call %q needs approval, but this client cannot answer permission requests and corvid could not open its control socket (%v); the call was not run. Relaunch corvid with --allow TOOL or --yolo to approve tools up front.\n\n", call.Title, err))
		return agent.RejectOnce, nil
	}
	timeout := ss.srv.opts.InteractionTimeout
	id := b.NewID()
	always := call.AlwaysLabel
	if always == "" {
		always = "Always allow"
	}
	say(permissionNotice(call, id, timeout))
	ans, err := b.Ask(ctx, respond.Question{ID: id, SessionID: ss.id, Title: call.Title, Detail: permissionDetail(call), Cwd: ss.Cwd()}, timeout)
	if err != nil && ctx.Err() == nil {
		say(fmt.Sprintf("[corvid] Request %s was denied: %v\n", id, err))
	}
	switch ans {
	case respond.Allow:
		say(fmt.Sprintf("[corvid] Request %s allowed.\n", id))
		return agent.AllowOnce, nil
	case respond.Always:
		say(fmt.Sprintf("[corvid] Request %s allowed; for the rest of the session: %s.\n", id, always))
		return agent.AllowAlways, nil
	}
	return agent.RejectOnce, nil
}

// say writes text into this connection's view of the conversation (not
// stored), whole, while the turn waits.
func (ss *session) say(text string) {
	ss.Emit(agent.Event{Kind: agent.EventMessageChunk, MessageID: agent.NewID("msg"), Content: &agent.Block{Type: agent.BlockText, Text: text}})
	ss.flushLines()
}

// permissionNotice is the text that tells a client that cannot answer
// requests how to answer permission question id.
func permissionNotice(call agent.ToolCall, id string, timeout time.Duration) string {
	wait := "until answered"
	if timeout > 0 {
		wait = "for " + timeout.String() + "; then it is denied"
	}
	always := call.AlwaysLabel
	if always == "" {
		always = "Always allow"
	}
	return fmt.Sprintf("\n\n[corvid] Permission needed (request %s): %s\nThis client cannot answer permission requests. Answer from a terminal on this machine:\n    corvid respond %s allow    (or: always, deny; always = %s)\nWaiting %s.\n\n", id, call.Title, id, always, wait)
}

// choiceNotice is the same for choice question rq.
func choiceNotice(text string, rq respond.Question, timeout time.Duration) string {
	wait := "until answered"
	if timeout > 0 {
		wait = "for " + timeout.String()
	}
	return fmt.Sprintf("\n\n[corvid] Question (request %s):\n%s\nChoices: %s\nThis client cannot show questions. Answer from a terminal on this machine:\n    corvid respond %s NUMBER\nWaiting %s.\n\n",
		rq.ID, strings.TrimRight(text, "\n"), rq.ChoiceList(), rq.ID, wait)
}

// permissionDetail is a permission question's detail for corvid respond:
// the call's input, compact.
func permissionDetail(call agent.ToolCall) string {
	if len(call.RawInput) > 0 {
		var v any
		if json.Unmarshal(call.RawInput, &v) == nil {
			if b, err := json.Marshal(v); err == nil {
				return string(b)
			}
		}
	}
	return ""
}

// dontAnswer is the last choice of an out-of-band choice question: it
// leaves the question unanswered.
const dontAnswer = "Don't answer"

// chooseOutOfBand is Choose for a host that cannot answer requests: the
// question and its numbered choices are written into the conversation and
// `corvid respond ID N` answers. No answer within the interaction timeout
// is ErrNoAnswer; a cancelled turn is ctx's error.
func (ss *session) chooseOutOfBand(ctx context.Context, q tool.ChoiceQuestion) (string, error) {
	say := ss.say
	b, err := ss.srv.broker()
	if err != nil {
		ss.srv.log.Error("control socket", "err", err)
		return "", tool.ErrCannotAsk
	}
	labels := make([]string, 0, len(q.Choices)+1)
	for _, c := range q.Choices {
		labels = append(labels, c.Label)
	}
	labels = append(labels, dontAnswer)
	title, _, _ := strings.Cut(strings.TrimSpace(q.Text), "\n")
	if title == "" {
		title = q.Title
	}
	rq := respond.Question{ID: b.NewID(), SessionID: ss.id, Title: title, Detail: q.Text, Cwd: ss.Cwd(), Choices: labels}
	timeout := ss.srv.opts.InteractionTimeout
	say(choiceNotice(q.Text, rq, timeout))
	ans, err := b.Ask(ctx, rq, timeout)
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case errors.Is(err, respond.ErrTimeout):
		say(fmt.Sprintf("[corvid] Request %s was not answered in time.\n", rq.ID))
		return "", tool.ErrNoAnswer
	case err != nil:
		return "", tool.ErrCannotAsk
	}
	say(fmt.Sprintf("[corvid] Request %s answered: %s.\n", rq.ID, ans))
	for _, c := range q.Choices {
		if c.Label == string(ans) {
			return c.ID, nil
		}
	}
	return "", nil
}
