package acpserver

import (
	"context"
	"errors"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// Team members and workers as sessions (docs/serve.md, CodeBuddy's C40).
// A member's session id (agent.MemberRoot names its root) can be loaded
// and resumed like any session: the member's updates from the store, then
// live while its root session runs here (agent.Session.AttachMember). A
// connection's view of a member is not one of its sessions: it takes no
// prompts or settings; session/cancel stops the member, session/close the
// view.

// _meta keys of members (docs/serve.md lists them for UIs).
const (
	// metaMember, on a member's session/list entry and its load answer:
	// {parentSessionId, name, status, color, description}.
	metaMember = "corvid.dev/member"
	// metaListMembers, in session/list's params, asks for the members.
	metaListMembers = "corvid.dev/members"
)

// memberView is one connection's view of a member session.
type memberView struct {
	ss     *session // id: the member's; sends its updates
	info   agent.MemberInfo
	detach func() // nil: replayed from the store, nothing live
}

// memberEmitter hands a member's live events to its view's connection.
type memberEmitter struct{ ss *session }

func (m memberEmitter) Emit(ev agent.Event) { m.ss.emit(ev, nil) }

func (memberEmitter) RequestPermission(context.Context, agent.ToolCall) (agent.Answer, error) {
	return agent.RejectOnce, nil // never asked: questions go to the root's holders
}

// memberMeta is a member's metaMember value.
func memberMeta(m agent.MemberInfo) map[string]any {
	return map[string]any{"parentSessionId": m.RootID, "name": m.Name, "status": m.Status, "color": m.Color, "description": m.Description}
}

// liveRoot is the agent session rootID that a connection of the process
// holds live (this one's, on stdio), or nil.
func (s *Server) liveRoot(rootID string) *agent.Session {
	if h := s.opts.Hub; h != nil {
		all, _ := h.holders(rootID)
		for _, ss := range all {
			if ss.holders == nil || ss.holders.open() {
				return ss.Session
			}
		}
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[rootID]; ss != nil {
		return ss.Session
	}
	return nil
}

// loadMember serves session/load (replay) and session/resume of member
// session id.
func (s *Server) loadMember(ctx context.Context, id, rootID string, replay bool) (any, error) {
	s.dropMember(id) // loaded again on this connection: afresh
	mv := &memberView{ss: &session{srv: s, id: id}}
	var run *acp.Run
	var replayTo func(agent.Event)
	if replay {
		run = s.conn.NewRun()
		replayTo = func(ev agent.Event) { mv.ss.replay(run, ev, nil) }
	}
	var err error
	if root := s.liveRoot(rootID); root != nil {
		mv.detach, mv.info, err = root.AttachMember(ctx, id, memberEmitter{mv.ss}, replayTo, maxTextBytes)
	} else {
		mv.info, err = s.opts.Agent.ReplayMember(ctx, id, maxTextBytes, replayTo)
	}
	if run != nil {
		_ = run.Flush()
	}
	if errors.Is(err, agent.ErrSessionNotFound) {
		return nil, sessionNotFound(id)
	}
	if err != nil {
		return nil, rpcError(s, err)
	}
	s.mu.Lock()
	if s.members == nil {
		s.members = map[string]*memberView{}
	}
	s.members[id] = mv
	s.mu.Unlock()
	return acp.LoadSessionResponse{Meta: acp.Meta{metaMember: memberMeta(mv.info)}}, nil
}

// dropMember ends this connection's view of member session id, if any; it
// reports whether there was one.
func (s *Server) dropMember(id string) bool {
	s.mu.Lock()
	mv := s.members[id]
	delete(s.members, id)
	s.mu.Unlock()
	if mv != nil && mv.detach != nil {
		mv.detach()
	}
	return mv != nil
}

// dropMembers ends every member view of the connection (its client left).
func (s *Server) dropMembers() {
	s.mu.Lock()
	ids := make([]string, 0, len(s.members))
	for id := range s.members {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.dropMember(id)
	}
}

// cancelMember stops member session id's running task, wherever its root
// runs in the process, when this connection views the member or holds
// its root.
func (s *Server) cancelMember(id, rootID string) {
	s.mu.Lock()
	ours := s.members[id] != nil || s.sessions[rootID] != nil
	s.mu.Unlock()
	if !ours {
		return
	}
	if root := s.liveRoot(rootID); root != nil {
		root.CancelMember(id)
	}
}

// memberRefusal answers a request that a member's session cannot take,
// when this connection views the member (nil otherwise).
func (s *Server) memberRefusal(id string) error {
	s.mu.Lock()
	mv := s.members[id]
	s.mu.Unlock()
	if mv == nil {
		return nil
	}
	return acp.InvalidParams("This session is a team member",
		"session "+id+" is the session of member "+mv.info.Name+" of session "+mv.info.RootID+
			"; a member takes no prompts or settings of its own: send them to "+mv.info.RootID+
			" (session/cancel stops the member, session/close stops following it)")
}

// listMembers are the session/list entries of root's members.
func (s *Server) listMembers(ctx context.Context, root acp.SessionInfo) []acp.SessionInfo {
	var members []agent.MemberInfo
	if live := s.liveRoot(root.SessionID); live != nil {
		members = live.Members()
	} else {
		var err error
		if members, err = s.opts.Agent.StoredMembers(ctx, root.SessionID); err != nil {
			s.log.Warn("list the session's members", "session", root.SessionID, "err", err)
			return nil
		}
	}
	out := make([]acp.SessionInfo, 0, len(members))
	for _, m := range members {
		info := acp.SessionInfo{SessionID: m.ID, Cwd: root.Cwd, AdditionalDirectories: root.AdditionalDirectories,
			Title: m.Description, UpdatedAt: root.UpdatedAt, Meta: acp.Meta{metaMember: memberMeta(m)}}
		if h := s.opts.Hub; h != nil {
			info.Meta[metaRunning] = m.Status == "running"
			info.Meta[metaAttached] = h.memberViews(m.ID)
		}
		out = append(out, info)
	}
	return out
}

// memberViews counts the connections that view member session id.
func (h *Hub) memberViews(id string) int {
	h.mu.Lock()
	servers := make([]*Server, 0, len(h.servers))
	for s := range h.servers {
		servers = append(servers, s)
	}
	h.mu.Unlock()
	n := 0
	for _, s := range servers {
		s.mu.Lock()
		if s.members[id] != nil {
			n++
		}
		s.mu.Unlock()
	}
	return n
}
