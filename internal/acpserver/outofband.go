package acpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/respond"
)

// broker opens the control socket on first use (ARCHITECTURE.md §3: hosts that
// cannot answer permission requests).
func (s *Server) broker() (*respond.Broker, error) {
	s.brokerOnce.Do(func() {
		if s.opts.RespondDir == "" {
			s.brokerErr = fmt.Errorf("no control socket directory configured")
			return
		}
		s.brk, s.brokerErr = respond.Listen(s.opts.RespondDir, s.log)
	})
	return s.brk, s.brokerErr
}

// askOutOfBand writes the question into the conversation, keeps the turn
// open, and waits for `corvid respond ID allow|always|deny`. No answer
// within the interaction timeout is a denial, never consent.
func (ss *session) askOutOfBand(ctx context.Context, call agent.ToolCall) (agent.Answer, error) {
	say := func(text string) {
		ss.Emit(agent.Event{Kind: agent.EventMessageChunk, MessageID: agent.NewID("msg"), Content: &agent.Block{Type: agent.BlockText, Text: text}})
	}
	b, err := ss.srv.broker()
	if err != nil {
		ss.srv.log.Error("control socket", "err", err)
		say(fmt.Sprintf("\n\n[corvid] Tool call %q needs approval, but this client cannot answer permission requests and corvid could not open its control socket (%v); the call was not run. Relaunch corvid with --allow TOOL or --yolo to approve tools up front.\n\n", call.Title, err))
		return agent.RejectOnce, nil
	}
	timeout := ss.srv.opts.InteractionTimeout
	id := b.NewID()
	wait := "until answered"
	if timeout > 0 {
		wait = "for " + timeout.String() + "; then it is denied"
	}
	always := call.AlwaysLabel
	if always == "" {
		always = "Always allow"
	}
	say(fmt.Sprintf("\n\n[corvid] Permission needed (request %s): %s\nThis client cannot answer permission requests. Answer from a terminal on this machine:\n    corvid respond %s allow    (or: always, deny; always = %s)\nWaiting %s.\n\n", id, call.Title, id, always, wait))
	detail := ""
	if len(call.RawInput) > 0 {
		var v any
		if json.Unmarshal(call.RawInput, &v) == nil {
			if b, err := json.Marshal(v); err == nil {
				detail = string(b)
			}
		}
	}
	ans, err := b.Ask(ctx, respond.Question{ID: id, SessionID: ss.id, Title: call.Title, Detail: detail, Cwd: ss.Cwd()}, timeout)
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
