package acpserver

import (
	"context"

	"github.com/corvid-agent/corvid/internal/acp"
)

// Initialize records the client's capabilities and answers with corvid's.
func (s *Server) Initialize(_ context.Context, req *acp.InitializeRequest) (acp.InitializeResponse, error) {
	s.mu.Lock()
	s.initialized = true
	s.clientCaps = req.ClientCapabilities
	s.clientInfo = req.ClientInfo
	s.mu.Unlock()
	s.chooseDialect(req)
	if req.ClientInfo != nil {
		s.log.Info("client connected", "client", req.ClientInfo.Name, "version", req.ClientInfo.Version)
	}
	resp := s.initializeResponse(req)
	if h := s.opts.Hub; h != nil {
		// Before the answer leaves: a relay that answered its editor
		// from the published copy finds it current (initanswers.go).
		h.answers.check(s.opts, req, resp)
	}
	return resp, nil
}

// initializeResponse is corvid's answer to req on this connection, whose
// dialect chooseDialect has set. It depends on nothing else of req than
// what InitializeKey names (initanswers.go).
func (s *Server) initializeResponse(req *acp.InitializeRequest) acp.InitializeResponse {
	images := false
	if m := s.opts.Agent.Model(); m != nil {
		images = m.Info().Images
	}
	caps := acp.AgentCapabilities{
		PromptCapabilities:  acp.PromptCapabilities{Image: images, EmbeddedContext: true},
		MCPCapabilities:     acp.MCPCapabilities{HTTP: true, SSE: true},
		SessionCapabilities: acp.SessionCapabilities{AdditionalDirectories: &acp.Present{}, Close: &acp.Present{}},
	}
	if s.opts.Auth != nil && s.opts.Auth.Logout != nil {
		caps.Auth = &acp.AgentAuthCaps{Logout: &acp.Present{}}
	}
	if s.opts.Stored {
		caps.LoadSession = true
		caps.SessionCapabilities.List = &acp.Present{}
		caps.SessionCapabilities.Delete = &acp.Present{}
		caps.SessionCapabilities.Resume = &acp.Present{}
		caps.SessionCapabilities.Fork = &acp.Present{}
	}
	s.dialectCapabilities(&caps)
	if s.opts.Hub != nil && watchesList(req.ClientCapabilities) {
		// It will get _corvid/sessions_changed (watch.go): it need not poll.
		if caps.Meta == nil {
			caps.Meta = acp.Meta{}
		}
		caps.Meta[capSessionsChanged] = true
	}
	return acp.InitializeResponse{
		ProtocolVersion:   acp.ProtocolVersion,
		AgentCapabilities: caps,
		AgentInfo:         &acp.Implementation{Name: "corvid", Title: "Corvid", Version: s.opts.Version},
		AuthMethods:       s.authMethods(req.ClientCapabilities != nil && req.ClientCapabilities.Auth.Terminal),
	}
}
