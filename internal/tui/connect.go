package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/corvid-agent/corvid/internal/acp"
)

// Attaching to the daemon (`corvid tui --connect`): the agent process is
// then the relay `corvid acp --connect ENDPOINT`, which carries frames to
// `corvid serve` and exits when the daemon's connection drops. The TUI
// shows the drop, starts the relay again with backoff, and re-attaches
// with session/load. That load replays the whole session; what this
// screen already shows is left out of the replay (transcript.go), so
// nothing is printed twice.

// Backoff between attempts to reconnect: doubled after each failed
// attempt, reset once a session is attached again.
const (
	reconnectFirst = 500 * time.Millisecond
	reconnectMax   = 10 * time.Second
)

// reconnectMsg says it is time to try the endpoint again.
type reconnectMsg struct{}

// connected tells whether the model talks to a daemon (--connect).
func (m *model) connected() bool { return m.opts.Endpoint != "" }

// connectionLost handles the end of the relay: the transcript stays as it
// is (an unfinished message goes on once re-attached), questions are
// dropped (the daemon asks again when the session is attached again), and
// a reconnection is scheduled.
func (m *model) connectionLost(msg agentGoneMsg) tea.Cmd {
	m.rejoinHold = false // a replay cut short: what it queued goes out
	if m.offline {
		// A failed attempt: wait longer.
		m.backoff = min(m.backoff*2, reconnectMax)
	} else {
		m.offline, m.backoff = true, reconnectFirst
		m.running = false
		m.cancelQuestions()
		why := "connection to " + m.opts.Endpoint + " lost"
		if !m.ready {
			why = "cannot connect to " + m.opts.Endpoint
		}
		if l := lastLine(msg.stderr); l != "" {
			why += ": " + l
		}
		m.printLines("", m.th.fail.Render("✗ "+why))
	}
	m.attempts++
	m.st.note = fmt.Sprintf("reconnecting in %s (attempt %d)", m.backoff.Round(100*time.Millisecond), m.attempts)
	return tea.Tick(m.backoff, func(time.Time) tea.Msg { return reconnectMsg{} })
}

// reconnect starts the relay again and re-attaches the session (or, if
// none was open yet, opens one as at start).
func (m *model) reconnect() tea.Cmd {
	if m.quitting {
		return nil
	}
	ag, err := startAgent(m.opts.Agent, m.opts.Cwd, m.send, false) // a relay: no terminal login
	if err != nil {
		return m.connectionLost(agentGoneMsg{err: err})
	}
	m.ag = ag
	m.st.note = "reconnecting…"
	if m.sessionID == "" {
		m.replaying = m.opts.Resume != ""
		return m.openSession(m.opts.Continue, m.opts.Resume)
	}
	m.rejoining = true
	return m.openSession(false, m.sessionID)
}

// holdRejoin starts holding the prints a re-attach's replay queues, at
// its first update, so that the line saying the session is attached again
// goes above them once the load answers (reattached); until then the
// input is still refused. A drop meanwhile ends the hold (connectionLost).
func (m *model) holdRejoin() {
	if !m.rejoinHold {
		m.rejoinHold, m.rejoinAt = true, len(m.printQ)
	}
}

// printable is how many queued lines may be printed now: those before a
// held replay's.
func (m *model) printable() int {
	if m.rejoinHold && !m.quitting {
		return min(len(m.printQ), m.rejoinAt)
	}
	return len(m.printQ)
}

// reattached is a successful session/load after a reconnection.
func (m *model) reattached() {
	m.rejoining, m.offline, m.attempts, m.backoff = false, false, 0, 0
	m.st.note = ""
	line := m.th.dim.Render("── reconnected to " + m.opts.Endpoint + " ──")
	if m.rejoinHold {
		m.printQ = slices.Insert(m.printQ, min(m.rejoinAt, len(m.printQ)), line)
		m.rejoinHold = false
		return
	}
	m.printLines(line)
}

// stale tells whether a message comes from a connection that is no longer
// the model's: a relay that ended, whose answers and errors are moot.
func (m *model) stale(ag *agent) bool {
	if ag != m.ag {
		return true
	}
	if ag == nil {
		return false
	}
	select {
	case <-ag.conn.Gone():
		return m.connected()
	default:
		return false
	}
}

// answeredElsewhere tells the user that another client of the daemon
// answered the open question first (the daemon withdrew it with
// $/cancel_request), naming that client when the tool call's update said
// who (`_meta["corvid.dev/answeredBy"]`, its clientInfo).
func (m *model) answeredElsewhere(req *acp.RequestPermissionRequest) {
	id := req.ToolCall.ToolCallID
	title := req.ToolCall.Title
	if title == "" {
		if c := m.tools[id]; c != nil {
			title = c.title
		}
	}
	who, known := m.answeredBy[id]
	if !known {
		who = "another client"
		m.awaitingWho[id] = title
	}
	m.printLines(m.th.dim.Render("? ") + oneLine(title) + m.th.dim.Render(" → answered by "+who))
}

// noteAnsweredBy records who answered a tool call's question, from a
// tool_call_update's _meta; a question already withdrawn gets its
// answerer named now.
func (m *model) noteAnsweredBy(raw json.RawMessage) {
	if !bytes.Contains(raw, []byte(`"corvid.dev/answeredBy"`)) {
		return // most updates: no second parse
	}
	var u struct {
		ToolCallID string `json:"toolCallId"`
	}
	if json.Unmarshal(raw, &u) != nil || u.ToolCallID == "" {
		return
	}
	m.answered(u.ToolCallID, answeredByMeta(raw))
}

// answered records who answered the question of a tool call (by: a
// clientInfo object); a question already withdrawn gets its answerer
// named now.
func (m *model) answered(toolCallID string, by json.RawMessage) {
	who := clientName(by)
	if who == "" {
		return
	}
	m.answeredBy[toolCallID] = who
	if title, ok := m.awaitingWho[toolCallID]; ok {
		delete(m.awaitingWho, toolCallID)
		m.printLines(m.th.dim.Render("  ("+oneLine(title)+" was answered by ") + who + m.th.dim.Render(")"))
	}
}

// answeredByMeta is _meta["corvid.dev/answeredBy"] of a message's params
// (a tool_call_update, or the $/cancel_request that withdrew a question).
func answeredByMeta(raw json.RawMessage) json.RawMessage {
	var u struct {
		Meta struct {
			By json.RawMessage `json:"corvid.dev/answeredBy"`
		} `json:"_meta"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return nil
	}
	return u.Meta.By
}

// clientName is a clientInfo object ({name, title, version}) in words.
func clientName(raw json.RawMessage) string {
	var ci struct{ Name, Title, Version string }
	if json.Unmarshal(raw, &ci) != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	name := ci.Title
	if name == "" {
		name = ci.Name
	}
	if name != "" && ci.Version != "" {
		name += " " + ci.Version
	}
	return name
}

func lastLine(s string) string {
	lines := splitLines(s)
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}
