package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/corvid-agent/corvid/internal/config"
)

// relay is `corvid acp --connect`: an editor launches `corvid acp` as
// always, and this process carries its NDJSON frames to a running
// `corvid serve` and back, unchanged. It loads no config, opens no store
// and starts no agent: the daemon does all of that (docs/serve.md).
func (c *acpCmd) relay() error {
	survivePipes()
	protoOut, err := claimStdout()
	if err != nil {
		return fmt.Errorf("claim stdout: %w", err)
	}
	logger, closeLog, err := newLogger(c.LogFile, c.LogLevel)
	if err != nil {
		return err
	}
	defer closeLog()
	if c.Connect == "auto" {
		path, err := c.autoDaemon(os.Args[1:])
		if err != nil {
			fmt.Fprintln(os.Stderr, "corvid acp --connect auto:", err)
			os.Exit(1)
		}
		c.Connect = "unix:" + path
	}
	var in io.Reader = os.Stdin
	if c.Compat != "" {
		in = declareDialect(in, c.Compat)
	}
	if path, ok := strings.CutPrefix(c.Connect, "unix:"); ok {
		err = relayUnix(path, in, protoOut)
	} else {
		err = c.relayWebSocket(in, protoOut, logger)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "corvid acp --connect:", err)
		os.Exit(1)
	}
	return nil
}

// autoDaemon returns the default socket of `corvid serve`, first starting
// the daemon when nothing answers there: detached (its own session), its
// log in $CORVID_HOME/serve.log (the data directory), with this command's
// flags (the model, permissions, …) less --connect. It waits until the
// socket answers.
func (c *acpCmd) autoDaemon(args []string) (string, error) {
	env := config.OSEnv{}
	path := config.ServeSocket(env)
	if answers(path) {
		return path, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the corvid binary: %w", err)
	}
	logPath := filepath.Join(config.DataDir(env), "serve.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return "", err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return "", fmt.Errorf("open the daemon's log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(exe, append([]string{"serve"}, daemonArgs(args)...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start corvid serve: %w", err)
	}
	fmt.Fprintf(os.Stderr, "corvid acp: started corvid serve (pid %d), log %s\n", cmd.Process.Pid, logPath)
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		if answers(path) {
			return path, nil
		}
		select {
		case <-exited:
			return "", fmt.Errorf("corvid serve exited at start; see %s", logPath)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("corvid serve did not listen on %s within 15 s; see %s", path, logPath)
}

// daemonArgs are the relay's own arguments for the daemon it starts: the
// command word, --connect (with its value) and --compat left out. A dialect
// is a connection's, not the daemon's: the relay declares it in its
// client's initialize (declareDialect).
func daemonArgs(args []string) []string {
	var out []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--connect" || a == "--connect-token-file" || a == "--compat":
			i++
		case strings.HasPrefix(a, "--connect=") || strings.HasPrefix(a, "--connect-token-file=") || strings.HasPrefix(a, "--compat="):
		default:
			out = append(out, a)
		}
	}
	return out
}

// answers reports whether something accepts connections at path.
func answers(path string) bool {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// relayGrace is how long the WebSocket relay waits, after stdin ended,
// for the daemon to go quiet: stdio's own shutdown grace.
const relayGrace = 500 * time.Millisecond

// relayUnix copies both ways until the daemon closes the socket; the
// editor closing stdin half-closes it, so the daemon sees the same EOF
// an in-process agent would.
func relayUnix(path string, in io.Reader, out io.Writer) error {
	conn, err := net.Dial("unix", path)
	if err != nil {
		return fmt.Errorf("no corvid serve at unix:%s: %w", path, err)
	}
	defer conn.Close()
	uc := conn.(*net.UnixConn)
	go func() {
		_, _ = io.Copy(uc, in)
		_ = uc.CloseWrite()
	}()
	_, err = io.Copy(out, uc)
	return err
}

// relayWebSocket sends each stdin line as a text frame and writes each
// frame as a line.
func (c *acpCmd) relayWebSocket(in io.Reader, out io.Writer, logger *slog.Logger) error {
	url, err := wsURL(c.Connect)
	if err != nil {
		return err
	}
	hdr := http.Header{}
	if c.ConnectTokenFile != "" {
		b, err := os.ReadFile(expandHome(c.ConnectTokenFile))
		if err != nil {
			return fmt.Errorf("--connect-token-file: %w", err)
		}
		hdr.Set("Authorization", "Bearer "+strings.TrimSpace(string(b)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		if resp != nil {
			return fmt.Errorf("connect to %s: HTTP %s", url, resp.Status)
		}
		return fmt.Errorf("connect to %s: %w", url, err)
	}
	defer ws.CloseNow()
	limit := int64(c.MaxLineBytes)
	if limit <= 0 {
		limit = 64 << 20
	}
	ws.SetReadLimit(limit)
	frames := make(chan struct{}, 1)
	go relayLines(ctx, in, ws, frames, logger)
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) || errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if _, err := out.Write(append(data, '\n')); err != nil {
			return nil // the editor went away
		}
		select {
		case frames <- struct{}{}:
		default:
		}
	}
}

// wsURL is the WebSocket URL of a --connect URL (http:// becomes ws://).
func wsURL(connect string) (string, error) {
	for from, to := range map[string]string{"http://": "ws://", "https://": "wss://", "ws://": "ws://", "wss://": "wss://"} {
		if rest, ok := strings.CutPrefix(connect, from); ok {
			return to + rest, nil
		}
	}
	return "", fmt.Errorf("--connect %q: want unix:PATH or ws://HOST:PORT/acp", connect)
}

// relayLines sends each stdin line as a text frame. A WebSocket has no
// half-close: once stdin ends, it waits until the daemon has been quiet
// for relayGrace (frames signals each frame the daemon sends; it answers
// what was sent before the end, as `corvid acp` does on stdio), then
// closes the socket.
func relayLines(ctx context.Context, in io.Reader, ws *websocket.Conn, frames <-chan struct{}, logger *slog.Logger) {
	defer func() {
		t := time.NewTimer(relayGrace)
		defer t.Stop()
		for quiet := false; !quiet; {
			select {
			case <-frames:
				t.Reset(relayGrace)
			case <-t.C:
				quiet = true
			case <-ctx.Done():
				quiet = true
			}
		}
		_ = ws.Close(websocket.StatusNormalClosure, "client closed its input")
	}()
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if werr := ws.Write(ctx, websocket.MessageText, line); werr != nil {
				logger.Warn("relay: write to the daemon failed", "err", werr)
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// declareDialect is in with the dialect of --compat (`corvid --acp
// --connect …`, a CodeBuddy host's launch line) declared in the client's
// initialize: _meta["corvid.dev/dialect"] (acpserver/dialect.go), which
// the daemon reads per connection. Only a first line that is an initialize
// request without a declaration of its own is changed; everything else
// passes as it is.
func declareDialect(in io.Reader, compat string) io.Reader {
	return &dialectReader{in: in, compat: compat}
}

// dialectReader reads the first line when it is first read, so that the
// relay connects before the editor writes.
type dialectReader struct {
	in     io.Reader
	compat string
	r      io.Reader // once the first line was read
}

func (d *dialectReader) Read(p []byte) (int, error) {
	if d.r == nil {
		br := bufio.NewReaderSize(d.in, 64<<10)
		line, err := br.ReadBytes('\n')
		first := withDialect(line, d.compat)
		if err != nil {
			d.r = io.MultiReader(bytes.NewReader(first), errReader{err})
		} else {
			d.r = io.MultiReader(bytes.NewReader(first), br)
		}
	}
	return d.r.Read(p)
}

// withDialect is one line with the dialect declared, when it is an
// initialize request that declares none.
func withDialect(line []byte, compat string) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil || string(msg["method"]) != `"initialize"` {
		return line
	}
	var params map[string]json.RawMessage
	if p := msg["params"]; len(p) > 0 && string(p) != "null" {
		if json.Unmarshal(p, &params) != nil {
			return line
		}
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	var meta map[string]any
	if m := params["_meta"]; len(m) > 0 && string(m) != "null" {
		if json.Unmarshal(m, &meta) != nil {
			return line
		}
	}
	if meta == nil {
		meta = map[string]any{}
	}
	if _, ok := meta[dialectMetaKey]; ok {
		return line
	}
	meta[dialectMetaKey] = compat
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return line
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return line
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return append(out, '\n')
}

// dialectMetaKey is acpserver's metaDialect.
const dialectMetaKey = "corvid.dev/dialect"

// errReader gives err at once (io.EOF ends the relay's input cleanly).
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
