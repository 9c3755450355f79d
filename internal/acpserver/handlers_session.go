package acpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/mcp"
)

// NewSession starts a session; with MCP servers to start, it answers
// concurrently.
func (s *Server) NewSession(_ context.Context, req *acp.NewSessionRequest) (any, error) {
	cwd, dirs, err := s.sessionPlace(req.Cwd, req.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	codeMode, err := initialCodeMode(req.Meta)
	if err != nil {
		return nil, err
	}
	id := agent.NewID("sess")
	ss := &session{srv: s, id: id}
	ss.holders = newHolders(ss)
	servers := mcpServers(req.MCPServers)
	return s.maybeDefer(len(servers) > 0 || s.opts.MCPConfigured, func() (any, error) {
		fsys, terms := s.toolBackends(id)
		as, err := s.opts.Agent.NewSession(agent.SessionOptions{ID: id, Cwd: cwd, Roots: dirs, Front: ss, FS: fsys, Terminals: terms, MCP: servers, CodeMode: codeMode})
		if err != nil {
			if errors.Is(err, agent.ErrNoModel) {
				return nil, acp.AuthRequired(s.opts.NoModelMessage)
			}
			return nil, err // mapped by rpcError
		}
		ss.Session = as
		s.mu.Lock()
		s.sessions[as.ID] = ss
		s.mu.Unlock()
		c := as.Controls()
		return acp.Then{
			Result: acp.NewSessionResponse{SessionID: as.ID, Modes: modeState(c), ConfigOptions: s.configOptionsFor(c), Meta: sessionMeta(c)},
			After: func() {
				ss.started()
				ss.holders.watchShared(as) // after the response: the client knows the session
			},
		}, nil
	})
}

// maybeDefer runs f now, or, when it starts MCP servers (which may take
// seconds), concurrently so other requests are not held up.
func (s *Server) maybeDefer(slow bool, f func() (any, error)) (any, error) {
	if slow {
		return acp.Deferred(f), nil
	}
	return f()
}

// mcpServers converts the editor's MCP server list.
func mcpServers(in []acp.McpServer) []mcp.Server {
	out := make([]mcp.Server, 0, len(in))
	for _, m := range in {
		srv := mcp.Server{Name: m.Name, Type: m.Type, Command: m.Command, Args: m.Args, URL: m.URL}
		for _, e := range m.Env {
			srv.Env = append(srv.Env, mcp.KV{Name: e.Name, Value: e.Value})
		}
		for _, h := range m.Headers {
			srv.Headers = append(srv.Headers, mcp.KV{Name: h.Name, Value: h.Value})
		}
		out = append(out, srv)
	}
	return out
}

// sessionPlace checks what new, load, resume and fork share: an absolute
// cwd (empty means the launch directory), absolute additional directories,
// and a model to serve the session with.
func (s *Server) sessionPlace(cwd string, dirs []string) (string, []string, error) {
	cwd, err := s.checkCwd(cwd)
	if err != nil {
		return "", nil, err
	}
	clean, err := checkDirs(dirs)
	if err != nil {
		return "", nil, err
	}
	for _, d := range append([]string{cwd}, clean...) {
		if err := existingDir(d); err != nil {
			return "", nil, err
		}
	}
	if s.opts.Agent.Model() == nil {
		return "", nil, acp.AuthRequired(s.opts.NoModelMessage)
	}
	return cwd, clean, nil
}

// checkCwd resolves the session cwd: empty means the launch directory; a
// relative path is refused.
func (s *Server) checkCwd(cwd string) (string, error) {
	if cwd == "" {
		cwd = s.opts.LaunchDir
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
	}
	if strings.ContainsRune(cwd, 0) {
		return "", acp.InvalidParams("cwd must not contain a NUL character", fmt.Sprintf("got %q", cwd))
	}
	if !filepath.IsAbs(cwd) {
		return "", acp.InvalidParams("cwd must be an absolute path", fmt.Sprintf("got %q", cwd))
	}
	return filepath.Clean(cwd), nil
}

// existingDir refuses a session directory that is not there: every tool
// would fail in it.
func existingDir(d string) error {
	st, err := os.Stat(d)
	switch {
	case err != nil:
		return acp.InvalidParams("The session directory does not exist", fmt.Sprintf("%q: %v", d, errors.Unwrap(err)))
	case !st.IsDir():
		return acp.InvalidParams("The session directory is not a directory", fmt.Sprintf("%q", d))
	}
	return nil
}

func checkDirs(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if strings.ContainsRune(d, 0) {
			return nil, acp.InvalidParams("additionalDirectories must not contain a NUL character", fmt.Sprintf("got %q", d))
		}
		if !filepath.IsAbs(d) {
			return nil, acp.InvalidParams("additionalDirectories must be absolute paths", fmt.Sprintf("got %q", d))
		}
		out = append(out, filepath.Clean(d))
	}
	return out, nil
}

// Prompt starts a turn in order and runs it concurrently; the answer is
// its stop reason, written after the turn's last update.
func (s *Server) Prompt(ctx context.Context, req *PromptParams) (any, error) {
	ss, err := s.lookup(req.SessionID)
	if err != nil {
		return nil, err
	}
	if ss.loggedOut.Load() {
		return nil, acp.AuthRequired(loggedOutMessage)
	}
	if req.Prompt == nil && req.Messages != nil && string(req.Messages) != "null" {
		if req.Prompt, err = blocksFromMessages(req.Messages); err != nil {
			return nil, err
		}
		s.messagesHost.Store(true)
	}
	blocks, err := s.promptBlocks(req.Prompt)
	if err != nil {
		return nil, err
	}
	turnID, err := conversationRequestID(req.Meta)
	if err != nil {
		return nil, err
	}
	if _, sent := req.Meta[metaConversationRequestID]; sent {
		s.turnIDHost.Store(true)
	}
	turnMeta := s.turnMeta(agent.TurnTag{ID: turnID})
	if s.opts.Hub != nil && s.opts.Hub.draining.Load() {
		return nil, errStopping()
	}
	turn, err := ss.StartTurnWith(blocks, agent.TurnOptions{TurnID: turnID, Headers: map[string]string{headerConversationRequest: turnID}, From: ss})
	if errors.Is(err, agent.ErrBusy) {
		return nil, acp.InvalidParams("A prompt turn is already running in this session", "session "+req.SessionID+" is busy; send session/cancel first or wait for the running prompt to finish")
	}
	if err != nil {
		return nil, err
	}
	s.opts.Hub.changed() // it runs
	select {
	case <-s.conn.Gone():
		// The client is gone (stdin closed): a prompt it queued before
		// leaving ends at once as cancelled, like a running one, unless
		// turns outlive their client (serve).
		if !s.keepsTurns() {
			ss.Cancel()
		}
	default:
	}
	return acp.Deferred(func() (any, error) {
		// $/cancel_request on the prompt cancels the turn; its client
		// going away does too, unless turns outlive their client.
		stop := context.AfterFunc(ctx, func() {
			if !s.keepsTurns() {
				ss.Cancel()
			}
		})
		defer stop()
		reason, err := turn.Run()
		defer s.opts.Hub.changed() // it ran
		ss.flushLines()            // the turn's last line, before its answer (gascitylines.go)
		// session_end, to each attachment that speaks CodeBuddy.
		ss.ShowAll(agent.Event{Kind: agent.EventTurnEnded, Stop: reason, Tags: agent.Tags{TurnID: turnID}})
		if err != nil {
			turn.Answered() // a worker's answer may wait (worker.go)
			return nil, err // mapped by rpcError
		}
		// Once the answer is written the session is idle: finished
		// workers may get a drain turn.
		return acp.Then{Result: acp.PromptResponse{StopReason: string(reason), Meta: turnMeta}, After: turn.Answered}, nil
	}), nil
}

// promptBlocks validates and converts prompt content.
func (s *Server) promptBlocks(in []acp.ContentBlock) ([]agent.Block, error) {
	if in == nil {
		return nil, missingPrompt()
	}
	images := s.opts.Agent.Model() != nil && s.opts.Agent.Model().Info().Images
	out := make([]agent.Block, 0, len(in))
	for i, b := range in {
		if err := b.Validate(); err != nil {
			return nil, acp.InvalidParams("Invalid prompt content", fmt.Sprintf("prompt[%d]: %v", i, err))
		}
		ab := agent.Block{Type: agent.BlockType(b.Type), Text: b.Text, MimeType: b.MimeType, URI: b.URI, Name: b.Name, Title: b.Title}
		switch b.Type {
		case "image":
			if !images {
				return nil, acp.InvalidParams("This model does not accept images", fmt.Sprintf("prompt[%d] is an image; promptCapabilities.image is false", i))
			}
			data, err := base64.StdEncoding.DecodeString(b.Data)
			if err != nil {
				return nil, acp.InvalidParams("Invalid prompt content", fmt.Sprintf("prompt[%d].data is not base64", i))
			}
			ab.Data = data
		case "audio":
			return nil, acp.InvalidParams("Audio prompts are not supported", fmt.Sprintf("prompt[%d] is audio; promptCapabilities.audio is false", i))
		case "resource":
			ab.URI, ab.MimeType = b.Resource.URI, b.Resource.MimeType
			if b.Resource.Text != nil {
				ab.Text = *b.Resource.Text
			} else {
				data, err := base64.StdEncoding.DecodeString(*b.Resource.Blob)
				if err != nil {
					return nil, acp.InvalidParams("Invalid prompt content", fmt.Sprintf("prompt[%d].resource.blob is not base64", i))
				}
				ab.Data, ab.Blob = data, true
			}
		}
		out = append(out, ab)
	}
	return out, nil
}

// Cancel cancels the session's running turn, if any.
func (s *Server) Cancel(_ context.Context, req *acp.SessionIDRequest) {
	if rootID, ok := agent.MemberRoot(req.SessionID); ok {
		s.cancelMember(req.SessionID, rootID) // members.go
		return
	}
	s.mu.Lock()
	ss := s.sessions[req.SessionID]
	s.mu.Unlock()
	if ss != nil {
		ss.Cancel()
		if s.opts.Hub != nil {
			// The turn may run on another connection (serve).
			s.opts.Hub.cancel(req.SessionID)
		}
	}
}
