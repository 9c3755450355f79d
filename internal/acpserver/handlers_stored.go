package acpserver

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// sessionNotFound is the answer for a session id the store does not know.
func sessionNotFound(id string) error {
	return acp.ResourceNotFound("Session not found", "no stored session "+id+"; session/list shows the ones that exist")
}

// restore handles session/load (replay true) and session/resume (false).
func (s *Server) restore(ctx context.Context, params json.RawMessage, replay bool) (any, error) {
	var req acp.LoadSessionRequest
	if err := decode(params, &req); err != nil {
		return nil, err
	}
	if req.SessionID == "" {
		return nil, acp.InvalidParams("Invalid params", "sessionId is required")
	}
	cwd, dirs, err := s.sessionPlace(req.Cwd, req.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	// Loading a session that is live on this connection starts it afresh.
	s.mu.Lock()
	old := s.sessions[req.SessionID]
	delete(s.sessions, req.SessionID)
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
	ss := &session{srv: s, id: req.SessionID}
	servers := mcpServers(req.MCPServers)
	return s.maybeDefer(len(servers) > 0 || s.opts.MCPConfigured, func() (any, error) {
		fsys, terms := s.toolBackends(req.SessionID)
		as, events, err := s.opts.Agent.LoadSession(ctx, agent.SessionOptions{ID: req.SessionID, Cwd: cwd, Roots: dirs, Front: ss, FS: fsys, Terminals: terms, MCP: servers})
		if errors.Is(err, agent.ErrSessionNotFound) {
			return nil, sessionNotFound(req.SessionID)
		}
		if err != nil {
			return nil, s.storeError(err)
		}
		ss.Session = as
		if replay {
			// Every replayed update is written before the response, by
			// construction: both leave through the same ordered writer.
			for _, ev := range events {
				ss.Emit(ev)
			}
		}
		s.mu.Lock()
		s.sessions[as.ID] = ss
		s.mu.Unlock()
		c := as.Controls()
		return acp.Then{
			Result: acp.LoadSessionResponse{Modes: modeState(c), ConfigOptions: configOptions(c), Meta: sessionMeta(c)},
			After:  ss.started,
		}, nil
	})
}

func (s *Server) storeError(err error) error {
	if errors.Is(err, agent.ErrProjectConfig) {
		s.log.Error("project config", "err", err)
		return &acp.Error{Code: acp.CodeInternalError, Message: "The project configuration cannot be used: " + err.Error()}
	}
	s.log.Error("session store", "err", err)
	return &acp.Error{Code: acp.CodeInternalError, Message: "The session store failed: " + err.Error()}
}

func (s *Server) listSessions(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.ListSessionsRequest
	if err := decode(params, &req); err != nil {
		return nil, err
	}
	if req.Cwd != "" {
		if _, err := s.checkCwd(req.Cwd); err != nil {
			return nil, err
		}
	}
	list, next, err := s.opts.Agent.ListSessions(ctx, req.Cwd, req.Cursor)
	if errors.Is(err, agent.ErrBadCursor) {
		return nil, acp.InvalidParams("Invalid cursor", "cursor was not issued by this agent's session/list")
	}
	if err != nil {
		return nil, s.storeError(err)
	}
	resp := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}, NextCursor: next}
	for _, si := range list {
		info := acp.SessionInfo{SessionID: si.ID, Cwd: si.Cwd, AdditionalDirectories: si.AdditionalDirs, Title: si.Title}
		if !si.UpdatedAt.IsZero() {
			info.UpdatedAt = si.UpdatedAt.UTC().Format(time.RFC3339Nano)
		}
		resp.Sessions = append(resp.Sessions, info)
	}
	return resp, nil
}

func (s *Server) closeSession(params json.RawMessage) (any, error) {
	var req acp.SessionIDRequest
	if err := decode(params, &req); err != nil {
		return nil, err
	}
	ss, err := s.lookup(req.SessionID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	delete(s.sessions, req.SessionID)
	s.mu.Unlock()
	ss.Close()
	return struct{}{}, nil
}

func (s *Server) deleteSession(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.SessionIDRequest
	if err := decode(params, &req); err != nil {
		return nil, err
	}
	if req.SessionID == "" {
		return nil, acp.InvalidParams("Invalid params", "sessionId is required")
	}
	s.mu.Lock()
	ss := s.sessions[req.SessionID]
	delete(s.sessions, req.SessionID)
	s.mu.Unlock()
	if ss != nil {
		ss.Close()
	}
	if err := s.opts.Agent.DeleteSession(ctx, req.SessionID); err != nil {
		return nil, s.storeError(err)
	}
	return struct{}{}, nil
}

func (s *Server) forkSession(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.LoadSessionRequest
	if err := decode(params, &req); err != nil {
		return nil, err
	}
	if req.SessionID == "" {
		return nil, acp.InvalidParams("Invalid params", "sessionId is required")
	}
	cwd, dirs, err := s.sessionPlace(req.Cwd, req.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	newID := agent.NewID("sess")
	if err := s.opts.Agent.ForkSession(ctx, req.SessionID, agent.SessionOptions{ID: newID, Cwd: cwd, Roots: dirs}); err != nil {
		if errors.Is(err, agent.ErrSessionNotFound) {
			return nil, sessionNotFound(req.SessionID)
		}
		return nil, s.storeError(err)
	}
	ss := &session{srv: s, id: newID}
	fsys, terms := s.toolBackends(newID)
	as, _, err := s.opts.Agent.LoadSession(ctx, agent.SessionOptions{ID: newID, Cwd: cwd, Roots: dirs, Front: ss, FS: fsys, Terminals: terms, MCP: mcpServers(req.MCPServers)})
	if err != nil {
		return nil, s.storeError(err)
	}
	ss.Session = as
	s.mu.Lock()
	s.sessions[newID] = ss
	s.mu.Unlock()
	c := as.Controls()
	return acp.Then{
		Result: acp.NewSessionResponse{SessionID: newID, Modes: modeState(c), ConfigOptions: configOptions(c), Meta: sessionMeta(c)},
		After:  ss.started,
	}, nil
}
