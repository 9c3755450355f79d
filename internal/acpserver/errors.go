package acpserver

import (
	"context"
	"errors"
	"strings"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/usererr"
)

// rpcError is the one place where a failure becomes what the editor sees.
// An *acp.Error goes as it is; the agent's sentinels get their protocol
// code; a usererr (including a provider's *llm.Error) shows its message;
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
	switch {
	case errors.Is(err, agent.ErrBusy):
		return acp.InvalidParams("A prompt turn is already running in this session", "send session/cancel first or wait for the running prompt to finish")
	case errors.Is(err, agent.ErrBusyElsewhere):
		return acp.InvalidParams("This session is running a turn in another corvid process", "wait for that turn to end, or cancel it in that process")
	case errors.Is(err, agent.ErrInvalidValue):
		// The agent words the value's problem after its sentinel.
		return acp.InvalidParams("Invalid config value", strings.TrimPrefix(err.Error(), agent.ErrInvalidValue.Error()+": "))
	case errors.As(err, &le) && le.Status == 401:
		// The key was refused: -32000 tells the editor to offer
		// authentication again.
		return acp.AuthRequired(le.Message)
	case errors.Is(err, agent.ErrProjectConfig):
		log("project config")
		return &acp.Error{Code: acp.CodeInternalError, Message: "The project configuration cannot be used: " + err.Error()}
	case errors.Is(err, agent.ErrStore):
		return storeFailure(log, err)
	}
	if u, ok := usererr.Of(err); ok {
		log("request failed")
		return acp.NewError(acp.CodeInternalError, u.Message, u.Details)
	}
	return err
}

// storeError maps a failure of a store operation (load, list, delete,
// fork), whatever its sentinel.
func (s *Server) storeError(err error) error {
	if _, ok := acp.AsError(err); ok || errors.Is(err, agent.ErrProjectConfig) {
		return rpcError(s, err)
	}
	return storeFailure(func(what string) { s.log.Error(what, "err", err) }, err)
}

// storeFailure words a session store failure. The store's own text names
// the database file and the condition (corrupt, disk full), which the user
// needs to act on; it is built by corvid's store package from its own
// sentences and SQLite's result text, never a Go type or stack.
func storeFailure(log func(string), err error) error {
	log("session store")
	return &acp.Error{Code: acp.CodeInternalError, Message: "The session store failed: " + err.Error()}
}

// userMessage is the user-facing text of err, or fallback when err is an
// internal error (which the caller logs).
func userMessage(err error, fallback string) string {
	if u, ok := usererr.Of(err); ok {
		return u.Message
	}
	return fallback
}
