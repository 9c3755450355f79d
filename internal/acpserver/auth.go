package acpserver

import (
	"context"
	"strings"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/llm"
)

// Auth is how clients can get corvid credentials (ACP authentication).
type Auth struct {
	// EnvVars are the providers' key variables, offered as agent-type
	// methods: set one in corvid's environment and authenticate.
	EnvVars []AuthEnvVar
	// TerminalArgs, appended to corvid's launch command, run an
	// interactive login (offered only to clients with auth.terminal).
	TerminalArgs []string
	// Resolve re-reads credentials and returns the model to serve, or nil
	// when there still are none.
	Resolve func() (llm.Model, error)
	// Logout removes stored keys.
	Logout func() error
}

// AuthEnvVar is one provider key variable.
type AuthEnvVar struct {
	Provider, Title, Var string
}

const terminalAuthID = "corvid-login"

// loggedOutMessage answers a prompt of a session whose credentials a
// logout removed.
const loggedOutMessage = "Authentication required: you logged out, and no key is left for this session's model. Log in again (authenticate, or `corvid auth login` then authenticate), then send the prompt again."

func (s *Server) authMethods(terminal bool) []acp.AuthMethod {
	a := s.opts.Auth
	out := []acp.AuthMethod{}
	if a == nil {
		return out
	}
	if terminal && len(a.TerminalArgs) > 0 {
		out = append(out, acp.AuthMethod{Type: "terminal", ID: terminalAuthID, Name: "Log in with an API key",
			Description: "Runs corvid's login in a terminal: pick a provider and paste its key; it is stored in the OS keyring or a private file.",
			Args:        a.TerminalArgs})
	}
	for _, e := range a.EnvVars {
		out = append(out, acp.AuthMethod{ID: "env:" + e.Var, Name: e.Title + " API key (" + e.Var + ")",
			Description: "Set " + e.Var + " in the environment corvid is launched with (e.g. the \"env\" of the editor's agent server entry), or store a key with `corvid auth login " + e.Provider + "`, then authenticate."})
	}
	return out
}

// Authenticate re-reads credentials for an offered method and serves the
// model they give.
func (s *Server) Authenticate(_ context.Context, req *acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	a := s.opts.Auth
	known := false
	for _, m := range s.authMethods(false) {
		known = known || m.ID == req.MethodID
	}
	if req.MethodID == terminalAuthID {
		return acp.AuthenticateResponse{}, acp.InvalidParams("Terminal authentication is not done through authenticate", "run the terminal method's command; then initialize again")
	}
	if a == nil || !known {
		return acp.AuthenticateResponse{}, acp.InvalidParams("Unknown authentication method", "no authentication method "+req.MethodID+" is offered; see authMethods in the initialize response")
	}
	m, err := a.Resolve()
	if err != nil {
		s.log.Error("authenticate", "err", err)
		return acp.AuthenticateResponse{}, acp.AuthRequired("Authentication failed: " + userMessage(err, "the credentials could not be read; see corvid's log for the cause."))
	}
	if m == nil {
		v := strings.TrimPrefix(req.MethodID, "env:")
		return acp.AuthenticateResponse{}, acp.AuthRequired("Authentication required: " + v + " is not set for corvid and no key is stored. Set it in corvid's environment or run `corvid auth login`, then restart the agent.")
	}
	s.opts.Agent.SetModel(m)
	// The sessions already open take the new credentials too: a key
	// revoked mid-session is replaced where the user is working, not only
	// in the next session.
	for _, ss := range s.openSessions() {
		if err := ss.Session.ReopenModel(); err != nil {
			s.log.Warn("authenticate: a session keeps its model", "session", ss.id, "err", err)
			continue
		}
		ss.loggedOut.Store(false)
	}
	return acp.AuthenticateResponse{Meta: s.userInfoMeta()}, nil
}

// Logout removes stored keys.
func (s *Server) Logout(context.Context, *acp.LogoutRequest) (struct{}, error) {
	a := s.opts.Auth
	if a == nil || a.Logout == nil {
		return struct{}{}, acp.MethodNotFound("logout")
	}
	if err := a.Logout(); err != nil {
		s.log.Error("logout", "err", err)
		return struct{}{}, &acp.Error{Code: acp.CodeInternalError, Message: "Logout failed: " + userMessage(err, "the stored keys could not be removed; see corvid's log for the cause.")}
	}
	m, _ := a.Resolve()
	s.opts.Agent.SetModel(m) // nil unless a key remains in the environment
	// A logout ends the stored keys' use in the sessions already open too:
	// each keeps working only if its model opens with what is left (a key
	// in the environment); otherwise its prompts need authenticate first.
	for _, ss := range s.openSessions() {
		if err := ss.Session.ReopenModel(); err != nil {
			ss.loggedOut.Store(true)
		}
	}
	return struct{}{}, nil
}

// openSessions are this connection's sessions open now.
func (s *Server) openSessions() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	open := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		if ss.Session != nil {
			open = append(open, ss)
		}
	}
	return open
}
