package main

import (
	"runtime"

	"context"
	"fmt"
	"github.com/corvid-agent/corvid/internal/reaper"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/acpserver"
	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/serve"
)

// serveCmd is `corvid serve`: one long-running process that owns sessions
// and serves ACP to any number of clients (docs/serve.md). It takes every
// flag of `acp` (model, permissions, sandbox, profile, logs) and wires the
// agent the same way; each connection runs the same protocol handler.
type serveCmd struct {
	acpCmd           `embed:""`
	Listen           []string      `name:"listen" placeholder:"ADDR" help:"Where to listen (repeatable): HOST:PORT serves ACP over Streamable HTTP and WebSocket at /acp; unix:PATH serves NDJSON ACP as on stdio. Default: unix:$CORVID_HOME/run/serve.sock."`
	TokenFile        string        `name:"token-file" placeholder:"FILE" help:"Require Authorization: Bearer with the token in FILE on every HTTP request; needed for a non-loopback --listen."`
	AllowOrigin      []string      `name:"allow-origin" placeholder:"ORIGIN" help:"A browser Origin accepted besides the listener's own http://HOST:PORT (repeatable), e.g. https://agent.example.com behind a TLS proxy."`
	OnDisconnect     string        `name:"on-disconnect" default:"" enum:",continue,cancel" help:"What a client that goes away does to the turns it started: continue (they run to their end, stored) or cancel. Default: on_disconnect in config, else continue."`
	MaxBufferedBytes int64         `name:"max-buffered-bytes" default:"67108864" help:"Output that may wait for one connection's client, in bytes; more closes the connection (its sessions go on)."`
	MaxOutputStall   time.Duration `name:"max-output-stall" default:"60s" help:"How long a client may read none of its waiting output before its connection is closed."`
	MaxBodyBytes     int64         `name:"max-body-bytes" default:"16777216" help:"Largest POST body or WebSocket frame, in bytes."`
	HTTPIdleTimeout  time.Duration `name:"http-idle-timeout" default:"10m" help:"Close a Streamable HTTP connection whose client neither posts nor holds a stream for this long (it left without DELETE); its sessions go on."`
	DrainTimeout     time.Duration `name:"drain-timeout" default:"30s" help:"On SIGTERM or SIGINT, how long running turns may go on before they are interrupted (stored as such); a second signal interrupts them at once."`
}

// The protocol connection's buffers under serve (acpserver.Options): its
// writer hands frames to serve's queue, which never blocks, so a few dozen
// slots keep it busy (16 cut BenchmarkServeStreamedTurn's rate, 64 did
// not); input lines longer than the buffer are read in pieces. Both count
// against BenchmarkServeIdleWebSockets' 64 KiB per connection.
const (
	connQueueFrames = 64
	connReadBuffer  = 2 << 10
)

// exitUsage is the exit status of a refused launch line.
const exitUsage = 2

func (c *serveCmd) Run() error {
	if c.Login {
		return c.login()
	}
	if c.Connect != "" {
		fmt.Fprintln(os.Stderr, "corvid serve: --connect belongs to corvid acp (the relay to a daemon), not to serve")
		os.Exit(exitUsage)
	}
	if c.Multitask || c.Profile.Agent == "multitask" {
		return fmt.Errorf("--multitask and --agent multitask cannot be used with serve: multitask is set per session")
	}
	// A copy: wire scrubs CORVID_* and the keys from the process
	// environment, and SIGHUP still needs CORVID_HOME to find the config.
	env := config.SnapshotEnv()
	addrs, token, err := c.listenAddrs(env)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corvid serve:", err)
		os.Exit(exitUsage)
	}
	survivePipes()
	logger, closeLog, err := newLogger(c.LogFile, c.LogLevel)
	if err != nil {
		return err
	}
	defer closeLog()
	slog.SetDefault(logger)
	c.kageDefaults() // serve's tools default to auto, as acp's do
	// Before any child starts, as in acp: detached children stay below
	// the daemon, so the control socket can refuse them (issue 35).
	if err := reaper.Adopt(logger); err != nil {
		level := slog.LevelWarn
		if runtime.GOOS != "linux" {
			level = slog.LevelDebug
		}
		logger.Log(context.Background(), level, "processes that detach from corvid's commands can answer its out-of-band questions", "err", err)
	}

	// The daemon reads the user's config.toml now and on SIGHUP only
	// (servereload.go).
	content, err := readUserConfig(env)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corvid:", err)
		os.Exit(1)
	}
	c.userConfig = &userConfig{content: content}
	ag, opts := c.wire(logger)
	opts.Hub = acpserver.NewHub()
	// Each connection's output queue is serve's (internal/serve): the
	// protocol connection's own stays small, as thousands may be idle.
	opts.ConnQueueFrames, opts.ConnReadBuffer = connQueueFrames, connReadBuffer
	cwd, _ := os.Getwd()
	rl := &reloader{c: c, env: env, cwd: cwd, log: logger}
	rl.file, _ = c.loadConfig(env, cwd) // wire loaded it already
	opts.OnDisconnect = c.onDisconnect(rl.file)
	rl.opts.Store(&opts)
	life := &lifecycle{log: logger, hub: opts.Hub, timeout: c.DrainTimeout, reload: rl.reload}
	srv := serve.New(serve.Options{
		Handler: func(ctx context.Context, r io.Reader, w io.Writer) error {
			return acpserver.Serve(ctx, r, w, rl.connOptions())
		},
		Logger:           logger,
		Token:            token,
		AllowOrigins:     lower(c.AllowOrigin),
		MaxBufferedBytes: c.MaxBufferedBytes,
		MaxOutputStall:   c.MaxOutputStall,
		MaxBodyBytes:     c.MaxBodyBytes,
		IdleTimeout:      c.HTTPIdleTimeout,
		Drain:            life.drain,
		// The initialize answers a relay gives its editor without waiting
		// for the daemon (acpserver/initanswers.go, internal/fastrelay).
		// Without them a relay waits for the daemon's answer: a warning.
		BeforeListenUnix: func(path string) error {
			if err := opts.Hub.PublishInitialize(rl.connOptions(), path+acpserver.InitAnswersSuffix); err != nil {
				logger.Warn("relays will wait for the daemon's initialize answers: they could not be published", "err", err)
			}
			return nil
		},
	})
	// Signals are ours before a launcher can learn that we listen: an
	// early SIGHUP would otherwise end the process (its default action).
	ctx, stop := watchServeSignals(life)
	defer stop()
	lns, err := srv.Listen(addrs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corvid serve:", err)
		_ = ag.Close()
		os.Exit(1)
	}
	for _, l := range lns {
		// Always on stderr, whatever --log-file says: how a launcher (or
		// a test) learns the port of HOST:0.
		fmt.Fprintf(os.Stderr, "corvid serve: listening on %s\n", l.URL)
		logger.Info("listening", "url", l.URL)
		if page, ok := strings.CutSuffix(l.URL, "/acp"); ok {
			// The dashboard (docs/dashboard.md). With a token, a single-use
			// login code, never the token; only on stderr, never in the log.
			page += "/"
			if token != "" {
				page += "login?once=" + srv.LoginCode()
			}
			fmt.Fprintf(os.Stderr, "corvid serve: dashboard at %s\n", page)
		}
	}

	err = srv.Serve(ctx, lns)
	opts.Hub.Close() // the daemon's control socket (corvid respond)
	opts.Hub.Unpublish()
	for _, l := range lns {
		if l.Addr.Network == "unix" {
			_ = os.Remove(l.Addr.Address)
		}
	}
	if cerr := ag.Close(); cerr != nil {
		logger.Error("close session store", "err", cerr)
	}
	if err != nil {
		return err
	}
	logger.Info("stopped")
	return nil
}

// listenAddrs parses --listen (default: the per-user socket) and reads the
// token. A listener other machines could reach needs a token.
func (c *serveCmd) listenAddrs(env config.Env) ([]serve.Addr, string, error) {
	list := c.Listen
	if len(list) == 0 {
		list = []string{"unix:" + config.ServeSocket(env)}
	}
	var addrs []serve.Addr
	for _, l := range list {
		a, err := serve.ParseAddr(l)
		if err != nil {
			return nil, "", err
		}
		if !a.Loopback() && c.TokenFile == "" {
			return nil, "", fmt.Errorf("--listen %s is reachable from other machines; give --token-file FILE (a bearer token every request must carry), or listen on a loopback address or a unix: socket", l)
		}
		addrs = append(addrs, a)
	}
	if c.TokenFile == "" {
		return addrs, "", nil
	}
	b, err := os.ReadFile(expandHome(c.TokenFile))
	if err != nil {
		return nil, "", fmt.Errorf("--token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if len(token) < 16 || strings.ContainsAny(token, " \t\r\n") {
		return nil, "", fmt.Errorf("--token-file %s: want one line of at least 16 characters without spaces", c.TokenFile)
	}
	return addrs, token, nil
}

func lower(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.TrimSuffix(strings.ToLower(s), "/")
	}
	return out
}

// onDisconnect is the policy for a client that goes away: the flag, else
// on_disconnect in the user's config, else continue.
func (c *serveCmd) onDisconnect(f *config.File) string {
	switch {
	case c.OnDisconnect != "":
		return c.OnDisconnect
	case f != nil && f.OnDisconnect != "":
		return f.OnDisconnect
	}
	return acpserver.DisconnectContinue
}
