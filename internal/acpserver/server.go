// Package acpserver adapts the agent to the Agent Client Protocol: it answers
// every client→agent method, turns agent events into session/update
// notifications, and asks the client for permission (and, when advertised,
// for file and terminal access). It is the only importer of internal/acp.
//
// Start with Serve and Protocol (protocol.go): one method per ACP method,
// reached through a dispatcher that decodes and validates params once; each
// is a short adapter in handlers_*.go, controls.go or auth.go that resolves
// state and calls into internal/agent. Failures become JSON-RPC errors in
// one place, rpcError (errors.go).
package acpserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/respond"
)

// Options configure a server.
type Options struct {
	Agent   *agent.Agent
	Version string
	// LaunchDir is the cwd for session/new without one (old Gas City).
	LaunchDir string
	// NoModelMessage is sent with -32000 on session/new when no model is
	// configured; it says exactly how to provide a key.
	NoModelMessage string
	Logger         *slog.Logger
	MaxLineBytes   int
	// ClientTools is "auto" (use the client's advertised fs/terminal
	// methods) or "never" (always in-process).
	ClientTools string
	// Stored says sessions persist (the agent has a store): load, resume,
	// list, close, delete and fork are served and advertised.
	Stored bool
	// RespondPlace holds the control socket for hosts that cannot answer
	// permission requests; InteractionTimeout bounds the wait (0: forever).
	RespondPlace       respond.Place
	InteractionTimeout time.Duration
	// Auth offers ways to provide credentials; nil offers none.
	Auth *Auth
	// MCPConfigured says the agent starts configured MCP servers for every
	// session (so session setup may take a while).
	MCPConfigured bool
	// Interrupt cancels every running turn each time it receives, and the
	// connection keeps serving (SIGINT; see gascity.go).
	Interrupt <-chan struct{}
	// CodeBuddy's dialect (codebuddy.go): Compat "codebuddy" adds its
	// non-schema frames; UserInfo answers authenticate; SetAgent resolves
	// session/set_agent's profile; NoBackgroundTasks withholds multitask.
	Compat            string
	UserInfo          *UserInfo
	SetAgent          func(name, cwd string) (agent.ProfileSwitch, error)
	LaunchAgent       string // the --agent profile's name ("": none)
	NoBackgroundTasks bool
	// OnDisconnect is what a client that goes away does to the turns it
	// started: "cancel" ("", stdio's rule: they end at once, cancelled) or
	// "continue" (`corvid serve`: they run to their end, stored, and the
	// sessions close after them; Serve returns then, or when ctx ends,
	// which cancels them).
	OnDisconnect string
	// Hub, when set, is shared by every connection of the process (serve):
	// a session/cancel reaches the turn any connection runs, and
	// session/list tells which sessions run (hub.go). nil on stdio.
	Hub *Hub
	// ConnQueueFrames and ConnReadBuffer size the protocol connection's
	// own buffers (acp.Options; 0: its defaults). serve, which queues each
	// connection's output itself and may hold thousands, keeps them small.
	ConnQueueFrames int
	ConnReadBuffer  int
}

// OnDisconnect policies.
const (
	DisconnectCancel   = "cancel"
	DisconnectContinue = "continue"
)

// Server is one ACP connection's state.
type Server struct {
	opts Options
	conn *acp.Conn
	log  *slog.Logger

	mu          sync.Mutex
	initialized bool
	clientCaps  *acp.ClientCapabilities // nil: the client sent none at all
	clientInfo  *acp.Implementation     // nil: the client sent none
	sessions    map[string]*session
	members     map[string]*memberView // the member sessions it views (members.go)

	brokerOnce sync.Once
	brk        *respond.Broker
	brokerErr  error

	// messagesHost is set once the client prompts with messages (Gas City;
	// see gascity.go).
	messagesHost atomic.Bool
	// turnIDHost is set once the client sends a turn id of its own
	// (turnid.go): from then on, as under --compat codebuddy, every update
	// of a turn carries the turn's id.
	turnIDHost atomic.Bool

	// connID names this connection as a session owner (codebuddy.go).
	connID string
	// chosen is the dialect initialize chose (dialect.go).
	chosen atomic.Pointer[dialect]
}

// session is a live session on this connection.
type session struct {
	*agent.Session
	srv *Server
	id  string // set before the agent session exists (MCP start may emit)
	// loggedOut: a logout left no credentials for the session's model; its
	// prompts are refused with auth_required until authenticate (auth.go).
	loggedOut atomic.Bool
	// ready is set once the client has the session id (after the
	// new/load response); events before that, such as an MCP server's
	// list change during start, are not sent.
	ready atomic.Bool
	// lines buffers the text mirrored for a host that prompts with
	// messages (gascitylines.go).
	lines lineMirror
	// holders is shared by every connection that holds this agent
	// session (attach.go); detach stops this one's events (nil: the
	// session's own front end).
	holders *holders
	detach  func()
	// turns keeps the running turn's _meta (dialect.go).
	turns turnMetaCache
	// replayRun is the run a session/load writes its replay into, until
	// the load's response (ReplayDone sends it before a live event).
	replayRun *acp.Run
}

// shutdownGrace bounds how long in-flight work may take to answer after the
// client went away (stdin EOF); ARCHITECTURE.md §7 budgets the whole exit at 100 ms.
const shutdownGrace = 500 * time.Millisecond

// Serve speaks ACP on r/w until r ends. It returns nil on a clean EOF.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{opts: opts, log: opts.Logger, sessions: map[string]*session{}, connID: agent.NewID("conn")}
	s.conn = acp.NewConn(r, w, s, acp.Options{Logger: opts.Logger, MaxLineBytes: opts.MaxLineBytes, BeforeWrite: opts.Agent.Sync,
		QueueFrames: opts.ConnQueueFrames, ReadBuffer: opts.ConnReadBuffer})
	if opts.Hub != nil {
		opts.Hub.join(s)
		defer opts.Hub.leave(s)
	}
	s.conn.AfterGone(func() {
		s.dropMembers()
		s.detachAll(ctx)
	})
	if opts.Interrupt != nil {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-s.conn.Gone():
					return
				case <-opts.Interrupt:
					n := s.InterruptTurns()
					s.log.Info("interrupt: running turns cancelled; still serving", "sessions", n)
				}
			}
		}()
	}
	err := s.conn.Serve(ctx, shutdownGrace)
	s.detachAll(ctx)
	s.brokerOnce.Do(func() {}) // none opens after this
	if s.brk != nil {
		_ = s.brk.Close()
	}
	return err
}

// keepsTurns says a turn goes on after its client left (OnDisconnect
// "continue") and the client has left.
func (s *Server) keepsTurns() bool {
	if s.opts.OnDisconnect != DisconnectContinue {
		return false
	}
	select {
	case <-s.conn.Gone():
		return true
	default:
		return false
	}
}

// detachAll closes the connection's sessions once its client is gone:
// at once (their turns cancelled), or under OnDisconnect "continue" each
// after its running turn ends, or when ctx ends.
func (s *Server) detachAll(ctx context.Context) {
	if s.opts.OnDisconnect != DisconnectContinue {
		s.closeAll()
		return
	}
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ss := range all {
		wg.Go(func() {
			if !ss.holders.shared() {
				// No other connection holds it (attach.go) to
				// follow the turn: let the turn end first.
				ss.WaitIdle(ctx)
			}
			ss.Close()
		})
	}
	wg.Wait()
}

func (s *Server) closeAll() {
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ss := range all {
		wg.Add(1)
		go func() { defer wg.Done(); ss.Close() }()
	}
	wg.Wait()
}

// HandleRequest routes a client request through the Protocol dispatcher.
func (s *Server) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return dispatchRequest(ctx, s, s.opts.Stored, method, params)
}

// HandleNotification routes a client notification; unknown ones are logged
// and ignored.
func (s *Server) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	if !dispatchNotification(ctx, s, method, params) {
		s.log.Debug("ignoring notification", "method", method)
	}
}

// lookup finds a live session; its id is known to be non-empty
// (the params were validated).
func (s *Server) lookup(id string) (*session, error) {
	s.mu.Lock()
	ss := s.sessions[id]
	s.mu.Unlock()
	if ss == nil {
		if err := s.memberRefusal(id); err != nil {
			return nil, err
		}
		return nil, acp.InvalidParams("Unknown session", "no session "+id+" on this connection; create it with session/new or session/load")
	}
	return ss, nil
}
