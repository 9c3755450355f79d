package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/coder/websocket"
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
	if path, ok := strings.CutPrefix(c.Connect, "unix:"); ok {
		err = relayUnix(path, os.Stdin, protoOut)
	} else {
		err = c.relayWebSocket(os.Stdin, protoOut, logger)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "corvid acp --connect:", err)
		os.Exit(1)
	}
	return nil
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
