package acpserver

import (
	"context"
	"errors"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/usererr"
)

// rpcError is the one place where a failure becomes what the editor sees.
// An *acp.Error goes as it is; the agent's sentinels get their protocol
// code; a usererr (the agent's store and project-configuration failures,
// a provider's *llm.Error) shows its message and details;
// anything else is logged here and leaves as a bare -32603 (acp.Conn never
// sends an internal error's text).
func rpcError(p Protocol, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := acp.AsError(err); ok || errors.Is(err, context.Canceled) {
		return err
	}
	log := func(what string) {
		if s, ok := p.(*Server); ok {
			s.log.Error(what, "err", err)
		}
	}
	var le *llm.Error
	u, isUser := usererr.Of(err)
	switch {
	case errors.Is(err, agent.ErrBusy):
		return acp.InvalidParams("A prompt turn is already running in this session", "send session/cancel first or wait for the running prompt to finish")
	case errors.Is(err, agent.ErrBusyElsewhere):
		return acp.InvalidParams("This session is running a turn in another corvid process or connection", "wait for that turn to end, or cancel it (under corvid serve, session/cancel from any connection that loaded the session does)")
	case errors.Is(err, agent.ErrDeletedElsewhere) && isUser:
		return acp.ResourceNotFound(u.Message, u.Details)
	case errors.Is(err, agent.ErrInvalidValue) && isUser:
		return acp.InvalidParams(u.Message, u.Details)
	case errors.As(err, &le) && le.Status == 401:
		// The key was refused: -32000 tells the editor to offer
		// authentication again.
		return acp.AuthRequired(le.Message)
	}
	if isUser {
		log("request failed")
		return acp.NewError(acp.CodeInternalError, u.Message, u.Details)
	}
	return err
}

// userMessage is the user-facing text of err, or fallback when err is an
// internal error (which the caller logs).
func userMessage(err error, fallback string) string {
	if u, ok := usererr.Of(err); ok {
		return u.Message
	}
	return fallback
}
