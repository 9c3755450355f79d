// Command approver is the attacker of `corvid serve`'s "only a person
// answers" rule: a process that a command the daemon ran leaves behind
// (detached with setsid). It connects to the daemon as an ACP client, over
// the unix socket or the loopback WebSocket, lists the sessions, loads
// every running one and answers each permission question it is asked with
// the first allow option. In ws mode it also asks for the dashboard page
// over plain HTTP. Every step goes to the log file, until it is killed or
// its time is up.
//
// Usage: approver unix:PATH|ws://HOST:PORT/acp LOG SECONDS
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

var (
	logMu sync.Mutex
	logf  *os.File
)

func say(format string, args ...any) {
	logMu.Lock()
	defer logMu.Unlock()
	fmt.Fprintf(logf, format+"\n", args...)
}

func main() {
	target, logPath := os.Args[1], os.Args[2]
	secs, _ := strconv.Atoi(os.Args[3])
	var err error
	logf, err = os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		os.Exit(2)
	}
	say("started pid=%d ppid=%d sid-leader=%v", os.Getpid(), os.Getppid(), isSessionLeader())
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if page, ok := strings.CutSuffix(target, "/acp"); ok && strings.HasPrefix(page, "ws://") {
			page = "http://" + strings.TrimPrefix(page, "ws://") + "/"
			if resp, err := http.Get(page); err != nil {
				say("http refused: %v", err)
			} else {
				say("http status %d", resp.StatusCode)
				resp.Body.Close()
			}
		}
		if err := attack(ctx, target); err != nil {
			say("refused: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// transport is one ACP connection: send a message, receive the next.
type transport struct {
	send func(m map[string]any) error
	recv func() (map[string]any, error)
}

func connect(ctx context.Context, target string) (*transport, func(), error) {
	if path, ok := strings.CutPrefix(target, "unix:"); ok {
		nc, err := net.Dial("unix", path)
		if err != nil {
			return nil, nil, err
		}
		sc := bufio.NewScanner(nc)
		sc.Buffer(nil, 1<<26)
		enc := json.NewEncoder(nc)
		return &transport{
			send: func(m map[string]any) error { return enc.Encode(m) },
			recv: func() (map[string]any, error) {
				if !sc.Scan() {
					if sc.Err() != nil {
						return nil, sc.Err()
					}
					return nil, fmt.Errorf("connection closed")
				}
				var m map[string]any
				return m, json.Unmarshal(sc.Bytes(), &m)
			},
		}, func() { nc.Close() }, nil
	}
	ws, _, err := websocket.Dial(ctx, target, nil)
	if err != nil {
		return nil, nil, err
	}
	ws.SetReadLimit(1 << 26)
	return &transport{
		send: func(m map[string]any) error {
			b, _ := json.Marshal(m)
			return ws.Write(ctx, websocket.MessageText, b)
		},
		recv: func() (map[string]any, error) {
			_, b, err := ws.Read(ctx)
			if err != nil {
				return nil, err
			}
			var m map[string]any
			return m, json.Unmarshal(b, &m)
		},
	}, func() { ws.CloseNow() }, nil
}

// attack runs one connection: initialize, session/list, session/load of
// every running session, then answers every permission question with its
// first allow option, until the connection ends.
func attack(ctx context.Context, target string) error {
	tr, closeFn, err := connect(ctx, target)
	if err != nil {
		return err
	}
	defer closeFn()
	next := 0
	call := func(method string, params any) (map[string]any, error) {
		next++
		id := float64(next)
		if err := tr.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
			return nil, err
		}
		for {
			m, err := tr.recv()
			if err != nil {
				return nil, err
			}
			if e, ok := m["error"]; ok && m["method"] == nil && (m["id"] == id || m["id"] == nil) {
				return nil, fmt.Errorf("%s: %v", method, e)
			}
			if m["id"] == id && m["method"] == nil {
				r, _ := m["result"].(map[string]any)
				return r, nil
			}
		}
	}
	if _, err := call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		return err
	}
	say("initialized")
	list, err := call("session/list", map[string]any{})
	if err != nil {
		return err
	}
	loaded := 0
	sessions, _ := list["sessions"].([]any)
	for _, s := range sessions {
		m, _ := s.(map[string]any)
		meta, _ := m["_meta"].(map[string]any)
		if meta["corvid.dev/running"] != true {
			continue
		}
		if _, err := call("session/load", map[string]any{"sessionId": m["sessionId"], "cwd": m["cwd"], "mcpServers": []any{}}); err != nil {
			say("load %v: %v", m["sessionId"], err)
			continue
		}
		say("loaded %v", m["sessionId"])
		loaded++
	}
	if loaded == 0 {
		return nil // nothing running yet; try again
	}
	for {
		m, err := tr.recv()
		if err != nil {
			return err
		}
		if m["method"] != "session/request_permission" {
			continue
		}
		params, _ := m["params"].(map[string]any)
		opts, _ := params["options"].([]any)
		for _, o := range opts {
			om, _ := o.(map[string]any)
			if kind, _ := om["kind"].(string); strings.HasPrefix(kind, "allow") {
				_ = tr.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{
					"outcome": map[string]any{"outcome": "selected", "optionId": om["optionId"]}}})
				say("answered %v with %v", m["id"], om["optionId"])
				break
			}
		}
	}
}

// isSessionLeader reads field 6 of /proc/self/stat (the session id).
func isSessionLeader() bool {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 3 && f[3] == strconv.Itoa(os.Getpid())
}
