// Package serve is corvid's daemon transport layer (`corvid serve`): it
// accepts ACP connections on unix sockets (NDJSON, exactly as on stdio) and
// on HTTP (the Streamable HTTP and WebSocket transport of ACP's RFD, at
// /acp), and runs the one protocol handler, acpserver, for each of them.
// It knows nothing of ACP methods beyond routing: the handler is injected
// (Options.Handler), and every connection of the daemon shares the agent
// the handler closes over, so sessions belong to the daemon, not to a
// connection.
//
// Start with Server.Run (this file); conn.go is one connection and its
// outbound queues, http.go the /acp routes, ws.go the WebSocket side,
// unix.go the socket listener, peer.go who may connect (never the
// daemon's own descendants). The rules it copies come from the
// TypeScript SDK's reference server (@agentclientprotocol/sdk 2.4.0,
// dist/transports/server.js); docs/serve.md says where corvid differs.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corvid-agent/corvid/internal/dashboard"
)

// Handler speaks ACP with one client: it reads NDJSON messages from r and
// writes NDJSON to w until r ends, then returns.
type Handler func(ctx context.Context, r io.Reader, w io.Writer) error

// Defaults, as the SDK's reference server has them.
const (
	DefaultMaxBufferedBytes = 64 << 20         // DEFAULT_MAX_BUFFERED_BYTES
	DefaultMaxOutputStall   = 60 * time.Second // DEFAULT_MAX_OUTPUT_STALL_MS
	DefaultMaxBodyBytes     = 16 << 20         // DEFAULT_MAX_REQUEST_BODY_BYTES (node adapter)
	DefaultMaxIDLength      = 1024             // DEFAULT_MAX_ID_LENGTH
	keepAlive               = 15 * time.Second // SSE comment every 15 s, as the SDK
	DefaultIdleTimeout      = 10 * time.Minute // corvid's own: the SDK keeps such connections
)

// Options configure a Server.
type Options struct {
	Handler Handler
	Logger  *slog.Logger
	// Token, when set, is required as `Authorization: Bearer TOKEN` on
	// every HTTP request and WebSocket upgrade.
	Token string
	// AllowOrigins are browser origins accepted besides the listener's own
	// http://HOST:PORT (a TLS proxy's https://name).
	AllowOrigins []string
	// MaxBufferedBytes of output may wait for one connection's client;
	// more closes the connection (its sessions go on).
	MaxBufferedBytes int64
	// MaxOutputStall is how long a client may take none of its waiting
	// output before its connection is closed.
	MaxOutputStall time.Duration
	// MaxBodyBytes bounds one POST body and one WebSocket frame.
	MaxBodyBytes int64
	MaxIDLength  int
	// IdleTimeout closes a Streamable HTTP connection whose client has
	// neither posted nor held a stream for that long: it went away
	// without DELETE (its sessions go on). 0: DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Drain, when set, runs once Serve's ctx has ended and new connections
	// are refused (socket listeners closed, HTTP answering 503 to a new
	// one), before the open connections close: the daemon lets its running
	// turns end there (cmd/corvid/servelife.go). Open connections keep
	// being served while it runs, so their clients see those turns to the
	// end.
	Drain func()
	// BeforeListenUnix, when set, runs for a unix socket's path once no
	// other daemon answers there and before this one listens: what it
	// writes beside the socket (the initialize answers relays read,
	// acpserver/initanswers.go) is in place before any client connects.
	// An error fails Listen.
	BeforeListenUnix func(path string) error
}

// Server accepts connections and runs a Handler for each.
type Server struct {
	opts Options
	log  *slog.Logger
	ctx  context.Context // the connections': it ends after the drain
	wg   sync.WaitGroup
	// draining is set once the daemon stops accepting: an initialize POST
	// or a WebSocket upgrade gets 503.
	draining atomic.Bool

	mu    sync.Mutex
	conns map[string]*conn

	dash *dashboard.Dashboard // the page at / and the browser's login
}

// New returns a server; zero limits take the defaults.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxBufferedBytes == 0 {
		opts.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if opts.MaxOutputStall == 0 {
		opts.MaxOutputStall = DefaultMaxOutputStall
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxIDLength == 0 {
		opts.MaxIDLength = DefaultMaxIDLength
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	return &Server{opts: opts, log: opts.Logger, conns: map[string]*conn{}, ctx: context.Background(),
		dash: dashboard.New(opts.Token)}
}

// LoginCode returns a fresh single-use code: opening
// http://HOST:PORT/login?once=CODE logs a browser in to the dashboard
// (internal/dashboard). Only meaningful with a token.
func (s *Server) LoginCode() string { return s.dash.NewLoginCode() }

// Addr is one --listen address.
type Addr struct {
	Network string // "unix" or "tcp"
	Address string // a path, or HOST:PORT
}

func (a Addr) String() string {
	if a.Network == "unix" {
		return "unix:" + a.Address
	}
	return a.Address
}

// ParseAddr reads a --listen value: unix:PATH, or HOST:PORT.
func ParseAddr(s string) (Addr, error) {
	if p, ok := strings.CutPrefix(s, "unix:"); ok {
		if p == "" {
			return Addr{}, fmt.Errorf("--listen %q: unix: needs a socket path", s)
		}
		return Addr{Network: "unix", Address: p}, nil
	}
	if _, _, err := net.SplitHostPort(s); err != nil {
		return Addr{}, fmt.Errorf("--listen %q: want HOST:PORT or unix:PATH", s)
	}
	return Addr{Network: "tcp", Address: s}, nil
}

// Loopback says whether the address is reachable only from this machine:
// a unix socket, or a TCP address whose host is a loopback IP or localhost.
func (a Addr) Loopback() bool {
	if a.Network == "unix" {
		return true
	}
	host, _, err := net.SplitHostPort(a.Address)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Listener is an open --listen address.
type Listener struct {
	Addr Addr
	ln   net.Listener
	// URL is where clients reach it: http://HOST:PORT/acp or unix:PATH.
	URL string
}

// Listen opens every address, or none: on an error the ones opened are
// closed again.
func (s *Server) Listen(addrs []Addr) ([]*Listener, error) {
	var out []*Listener
	for _, a := range addrs {
		var l *Listener
		var err error
		if a.Network == "unix" {
			l, err = listenUnix(a, s.opts.BeforeListenUnix)
		} else {
			l, err = listenTCP(a)
		}
		if err != nil {
			for _, o := range out {
				_ = o.ln.Close()
			}
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

func listenTCP(a Addr) (*Listener, error) {
	ln, err := net.Listen("tcp", a.Address)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", a.Address, err)
	}
	return &Listener{Addr: a, ln: ln, URL: "http://" + ln.Addr().String() + "/acp"}, nil
}

// Serve accepts connections on every listener until ctx ends. Then it
// stops accepting new connections, runs Options.Drain while the open ones
// are still served, closes them and the listeners, and waits for their
// handlers to return.
func (s *Server) Serve(ctx context.Context, lns []*Listener) error {
	connCtx, cancelConns := context.WithCancel(context.Background())
	defer cancelConns()
	s.ctx = connCtx
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.sweep(connCtx)
	}()
	errc := make(chan error, len(lns))
	var https []*http.Server
	for _, l := range lns {
		if l.Addr.Network == "unix" {
			go func() { errc <- s.acceptUnix(ctx, l) }()
			continue
		}
		hs := s.httpServer(l)
		https = append(https, hs)
		go func() { errc <- hs.Serve(guardedListener{l.ln, s.log}) }() // peer.go
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
	}
	// Stop accepting connections. A socket's connection is an ACP
	// connection: its listener closes. Over HTTP, the clients of the
	// connections already open must still post (a cancel, a question's
	// answer) and may need a new TCP socket for it: the listener stays
	// open, and only a new ACP connection gets 503 (Draining).
	s.draining.Store(true)
	for _, l := range lns {
		if l.Addr.Network == "unix" {
			_ = l.ln.Close()
		}
	}
	if s.opts.Drain != nil && err == nil {
		s.log.Info("stopped accepting; draining")
		s.opts.Drain()
	}
	s.closeGently(closeGrace)
	cancelConns()
	for _, l := range lns {
		_ = l.ln.Close()
	}
	for _, hs := range https {
		_ = hs.Close()
	}
	for _, c := range s.all() {
		c.close("daemon stopping")
	}
	s.wg.Wait()
	return err
}

// closeGrace bounds how long a stopping daemon waits for its connections
// to answer what they were sent and for their clients to take it.
const closeGrace = 5 * time.Second

// closeGently ends every connection's input, as its client closing would,
// and waits until each has answered and its client taken the answers (a
// turn that ended in the drain still answers its prompt), or until grace.
func (s *Server) closeGently(grace time.Duration) {
	all := s.all()
	for _, c := range all {
		c.endInput()
	}
	deadline := time.Now().Add(grace)
	for _, c := range all {
		for !c.settled() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// Draining says the daemon stopped accepting connections: it is stopping.
func (s *Server) Draining() bool { return s.draining.Load() }

func (s *Server) httpServer(l *Listener) *http.Server {
	mux := http.NewServeMux()
	acp := &acpHandler{srv: s, self: "http://" + l.ln.Addr().String()}
	mux.Handle("/acp", acp)
	mux.Handle("/", acp.page())
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true) // h2c with prior knowledge
	return &http.Server{
		Handler:           withHeaders(mux),
		Protocols:         &p,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute, // idle keep-alive sockets, not ACP connections
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
}

func (s *Server) register(c *conn) {
	s.mu.Lock()
	s.conns[c.id] = c
	s.mu.Unlock()
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	if s.conns[c.id] == c {
		delete(s.conns, c.id)
	}
	s.mu.Unlock()
}

func (s *Server) lookup(id string) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[id]
}

func (s *Server) all() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		out = append(out, c)
	}
	return out
}
