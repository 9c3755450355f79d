package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
)

// What `corvid sessions list` adds when a daemon (`corvid serve`) answers
// on the default socket: each session's live state there, from its
// session/list (docs/serve.md). Without a daemon the list is the store's
// alone, as before.

// liveState is a session the daemon holds: whether a turn runs, how many
// connected clients hold it, and the questions waiting for an answer.
type liveState struct {
	Running  bool          `json:"running"`
	Attached int           `json:"attached"`
	Waiting  []liveWaiting `json:"waiting,omitempty"`
}

// liveWaiting is one question of corvid.dev/waiting.
type liveWaiting struct {
	RequestID  string `json:"requestId,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	Title      string `json:"title"`
}

// held says whether the daemon holds the session live at all.
func (l *liveState) held() bool {
	return l != nil && (l.Running || l.Attached > 0 || len(l.Waiting) > 0)
}

// describe is the state for a table cell.
func (l *liveState) describe() string {
	if !l.held() {
		return ""
	}
	var parts []string
	if l.Running {
		parts = append(parts, "running")
	} else {
		parts = append(parts, "idle")
	}
	switch l.Attached {
	case 0:
		parts = append(parts, "no client")
	case 1:
		parts = append(parts, "1 client")
	default:
		parts = append(parts, fmt.Sprintf("%d clients", l.Attached))
	}
	if len(l.Waiting) > 0 {
		ids := make([]string, 0, len(l.Waiting))
		for _, w := range l.Waiting {
			id := w.RequestID
			if id == "" {
				id = "a form"
			}
			ids = append(ids, id)
		}
		parts = append(parts, "waiting for an answer ("+strings.Join(ids, ", ")+")")
	}
	return strings.Join(parts, ", ")
}

// daemonTimeout bounds the whole exchange with the daemon.
const daemonTimeout = 3 * time.Second

// daemonSessions asks the daemon on the default socket for its sessions;
// ok is false when none answers there.
func daemonSessions(env config.Env) (live map[string]*liveState, ok bool, err error) {
	nc, err := net.DialTimeout("unix", config.ServeSocket(env), time.Second)
	if err != nil {
		return nil, false, nil // no daemon
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(daemonTimeout))
	c := &lineClient{enc: json.NewEncoder(nc), sc: bufio.NewScanner(nc)}
	c.sc.Buffer(nil, 1<<26)
	if _, err := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "corvid-sessions", "title": "corvid sessions", "version": version}}); err != nil {
		return nil, true, fmt.Errorf("the daemon on %s: %w", config.ServeSocket(env), err)
	}
	live = map[string]*liveState{}
	params := map[string]any{}
	for range 1000 { // pages
		raw, err := c.call("session/list", params)
		if err != nil {
			return nil, true, fmt.Errorf("the daemon on %s: %w", config.ServeSocket(env), err)
		}
		var page struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
				Meta      struct {
					Running  bool          `json:"corvid.dev/running"`
					Attached int           `json:"corvid.dev/attached"`
					Waiting  []liveWaiting `json:"corvid.dev/waiting"`
				} `json:"_meta"`
			} `json:"sessions"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, true, fmt.Errorf("the daemon's session/list: %w", err)
		}
		for _, s := range page.Sessions {
			l := &liveState{Running: s.Meta.Running, Attached: s.Meta.Attached, Waiting: s.Meta.Waiting}
			if l.held() {
				live[s.SessionID] = l
			}
		}
		if page.NextCursor == "" {
			break
		}
		params = map[string]any{"cursor": page.NextCursor}
	}
	return live, true, nil
}

// lineClient is the least of an ACP client over NDJSON: one request at a
// time, everything else the agent sends skipped.
type lineClient struct {
	enc  *json.Encoder
	sc   *bufio.Scanner
	next int
}

func (c *lineClient) call(method string, params any) (json.RawMessage, error) {
	c.next++
	if err := c.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for c.sc.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(c.sc.Bytes(), &m) != nil || m.Method != "" || m.ID == nil || *m.ID != c.next {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	}
	if err := c.sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s: the daemon closed the connection", method)
}
