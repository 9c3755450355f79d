package acpserver

import (
	"context"
	"errors"
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// sessionNotFound is the answer for a session id the store does not know.
func sessionNotFound(id string) error {
	return acp.ResourceNotFound("Session not found", "no stored session "+id+"; session/list shows the ones that exist")
}

// LoadSession restores a stored session and replays its history.
func (s *Server) LoadSession(ctx context.Context, req *acp.LoadSessionRequest) (any, error) {
	return s.restore(ctx, req, true)
}

// ResumeSession restores a stored session without replaying it.
func (s *Server) ResumeSession(ctx context.Context, req *acp.LoadSessionRequest) (any, error) {
	return s.restore(ctx, req, false)
}

// restore handles session/load (replay true) and session/resume (false).
func (s *Server) restore(ctx context.Context, req *acp.LoadSessionRequest, replay bool) (any, error) {
	cwd, dirs, err := s.sessionPlace(req.Cwd, req.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	if rootID, ok := agent.MemberRoot(req.SessionID); ok {
		return s.loadMember(ctx, req.SessionID, rootID, replay) // members.go
	}
	// Loading a session that is live on this connection starts it afresh.
	s.mu.Lock()
	old := s.sessions[req.SessionID]
	delete(s.sessions, req.SessionID)
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
	// One that another connection of the daemon holds is attached to.
	if s.opts.Hub != nil {
		if live := s.opts.Hub.liveElsewhere(req.SessionID, s); live != nil {
			if res, err := s.attach(ctx, req, live, replay); res != nil || err != nil {
				return res, err
			}
		}
	}
	ss := &session{srv: s, id: req.SessionID}
	ss.holders = newHolders(ss)
	servers := mcpServers(req.MCPServers)
	return s.maybeDefer(len(servers) > 0 || s.opts.MCPConfigured, func() (any, error) {
		fsys, terms := s.toolBackends(req.SessionID)
		o := agent.SessionOptions{ID: req.SessionID, Cwd: cwd, Roots: dirs, Front: ss, FS: fsys, Terminals: terms, MCP: servers}
		var run *acp.Run
		if replay {
			// Every replayed update is written before the response, by
			// construction: both leave through the same ordered writer.
			// The replay is written as the log is read.
			run = s.conn.NewRun()
			ss.replayRun = run
			turns := replayTurnMeta{srv: s}
			o.ReplayTextMax = maxTextBytes // the pieces updatesFor cuts
			o.Replay = func(ev agent.Event) {
				ss.replay(run, ev, turns.next(ev)) // replay tags every turn: a load is not a stream
			}
		}
		as, err := s.opts.Agent.LoadSession(ctx, o)
		if run != nil {
			_ = run.Flush()
		}
		if errors.Is(err, agent.ErrSessionNotFound) {
			return nil, sessionNotFound(req.SessionID)
		}
		if err != nil {
			return nil, rpcError(s, err)
		}
		ss.Session = as
		s.takeOver(ctx, as)
		s.restoreProfile(ss)
		s.mu.Lock()
		s.sessions[as.ID] = ss
		s.mu.Unlock()
		c := as.Controls()
		return acp.Then{
			Result: acp.LoadSessionResponse{Modes: modeState(c), ConfigOptions: s.configOptionsFor(c), Meta: sessionMeta(c)},
			After: func() {
				ss.started()
				// Other daemons' open questions, and those to come.
				ss.holders.watchShared(as)
				go ss.holders.syncShared(as)
			},
		}, nil
	})
}

// ListSessions pages through the stored sessions, optionally of one cwd.
func (s *Server) ListSessions(ctx context.Context, req *acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	if req.Cwd != "" {
		if _, err := s.checkCwd(req.Cwd); err != nil {
			return acp.ListSessionsResponse{}, err
		}
	}
	list, next, err := s.opts.Agent.ListSessions(ctx, req.Cwd, req.Cursor)
	if errors.Is(err, agent.ErrBadCursor) {
		return acp.ListSessionsResponse{}, acp.InvalidParams("Invalid cursor", "cursor was not issued by this agent's session/list")
	}
	if err != nil {
		return acp.ListSessionsResponse{}, rpcError(s, err)
	}
	resp := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}, NextCursor: next}
	var elsewhere map[string]bool
	if s.opts.Hub != nil && len(list) > 0 {
		ids := make([]string, len(list))
		for i, si := range list {
			ids[i] = si.ID
		}
		// A shared store (PostgreSQL): turns other daemons run now.
		if elsewhere, err = s.opts.Agent.RunningElsewhere(ctx, ids); err != nil {
			s.log.Warn("read which sessions run elsewhere", "err", err)
		}
	}
	for _, si := range list {
		info := acp.SessionInfo{SessionID: si.ID, Cwd: si.Cwd, AdditionalDirectories: si.AdditionalDirs, Title: si.Title}
		if !si.UpdatedAt.IsZero() {
			info.UpdatedAt = si.UpdatedAt.UTC().Format(time.RFC3339Nano)
		}
		if s.opts.Hub != nil {
			info.Meta = s.opts.Hub.listMeta(si, elsewhere[si.ID])
			s.addStoredState(ctx, si, info.Meta)
		}
		resp.Sessions = append(resp.Sessions, info)
		if req.Meta[metaListMembers] == true {
			resp.Sessions = append(resp.Sessions, s.listMembers(ctx, info)...)
		}
	}
	return resp, nil
}

// CloseSession ends a live session on this connection.
func (s *Server) CloseSession(_ context.Context, req *acp.SessionIDRequest) (struct{}, error) {
	if s.dropMember(req.SessionID) {
		return struct{}{}, nil // a member's view (members.go)
	}
	ss, err := s.lookup(req.SessionID)
	if err != nil {
		return struct{}{}, err
	}
	s.mu.Lock()
	delete(s.sessions, req.SessionID)
	s.mu.Unlock()
	ss.Close()
	return struct{}{}, nil
}

// DeleteSession closes a session if live and removes it from the store.
func (s *Server) DeleteSession(ctx context.Context, req *acp.SessionIDRequest) (struct{}, error) {
	s.mu.Lock()
	ss := s.sessions[req.SessionID]
	delete(s.sessions, req.SessionID)
	s.mu.Unlock()
	if ss != nil {
		ss.Close()
	}
	if err := s.opts.Agent.DeleteSession(ctx, req.SessionID); err != nil {
		return struct{}{}, rpcError(s, err)
	}
	s.opts.Hub.changed()
	return struct{}{}, nil
}

// ForkSession copies a stored session under a new id and opens the copy.
func (s *Server) ForkSession(ctx context.Context, req *acp.LoadSessionRequest) (any, error) {
	cwd, dirs, err := s.sessionPlace(req.Cwd, req.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	newID := agent.NewID("sess")
	if err := s.opts.Agent.ForkSession(ctx, req.SessionID, agent.SessionOptions{ID: newID, Cwd: cwd, Roots: dirs}); err != nil {
		if errors.Is(err, agent.ErrSessionNotFound) {
			return nil, sessionNotFound(req.SessionID)
		}
		return nil, rpcError(s, err)
	}
	ss := &session{srv: s, id: newID}
	ss.holders = newHolders(ss)
	fsys, terms := s.toolBackends(newID)
	as, err := s.opts.Agent.LoadSession(ctx, agent.SessionOptions{ID: newID, Cwd: cwd, Roots: dirs, Front: ss, FS: fsys, Terminals: terms, MCP: mcpServers(req.MCPServers)})
	if err != nil {
		return nil, rpcError(s, err)
	}
	ss.Session = as
	s.mu.Lock()
	s.sessions[newID] = ss
	s.mu.Unlock()
	c := as.Controls()
	return acp.Then{
		Result: acp.NewSessionResponse{SessionID: newID, Modes: modeState(c), ConfigOptions: s.configOptionsFor(c), Meta: sessionMeta(c)},
		After:  ss.started,
	}, nil
}
