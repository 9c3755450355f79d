package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
)

// agent is the ACP connection to the agent process, seen from the client
// side: the TUI calls it as an editor would, and it turns the agent's
// notifications and requests into messages for the UI (send).
type agent struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	conn    *acp.Conn
	send    func(any)
	stderr  *tailBuffer
	served  chan struct{} // closed when the connection ended
	exited  chan struct{} // closed when the process was reaped
	waitErr error
	argv    []string // the agent's command
	// termAuth says initialize advertises terminal login (auth.terminal):
	// the TUI started the agent itself and can run its command again in
	// the terminal. Never for a relay to the daemon (--connect).
	termAuth bool
	// authMethods are the login methods initialize offered (login.go),
	// read through logins.
	authMu      sync.Mutex
	authMethods []authMethod
	initMu      sync.Mutex
	initialized bool       // initialize succeeded
	caps        promptCaps // what prompts may carry (attach.go); under initMu
	canLoad     bool       // agentCapabilities.loadSession; under initMu

	qmu   sync.Mutex
	queue []updateMsg // session/updates not yet taken by the UI
	// woken says an updatesMsg is on its way (sent, or due on a timer):
	// it stays set until the UI handles that message, whatever other
	// message takes the queue meanwhile, so that one wake at a time is
	// outstanding.
	woken bool
	// run is the newest queued update when it is a run of text chunks
	// that the next one may join (coalesce.go).
	run *merged
	// runText is the text buffer of the last run ended, for the next
	// (endRun), until the turn ends (dropRunText): a run the UI takes late
	// holds megabytes, and growing a new buffer to that size for each was
	// a fifth of the TUI's CPU on a 10 MB answer.
	runText []byte
	// scratch is where HandleNotification decodes a chunk's text with
	// escapes before it copies it (coalesce.go, quick.chunk): the
	// connection hands notifications over one at a time, in order.
	scratch []byte
	// taken is when the UI last took the queue.
	taken time.Time
	// hungry says the UI finished a print and has nothing left to print:
	// the next update wakes it at once (fedMsg) rather than at the wake's
	// rate, so that a long answer's next lines do not wait up to a frame
	// for a timer while the terminal is idle. Any take ends it.
	hungry bool
}

// startAgent runs argv as the agent with stdio pipes and serves the
// connection. send receives updateMsg, permissionMsg and agentGoneMsg.
// termAuth: the TUI can run argv in the terminal for a login (login.go).
func startAgent(argv []string, dir string, send func(any), termAuth bool) (*agent, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	a := &agent{cmd: cmd, argv: argv, termAuth: termAuth, stdin: stdin, send: send, stderr: &tailBuffer{max: 16 << 10},
		served: make(chan struct{}), exited: make(chan struct{})}
	// The agent's logs would tear the screen: keep their tail to show if
	// it dies.
	cmd.Stderr = a.stderr
	detach(cmd)
	// A process the agent started may outlive it holding its stderr:
	// waiting for that ends a second after the agent exits.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start agent %s: %w", argv[0], err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a.conn = acp.NewConn(stdout, stdin, a, acp.Options{Logger: quiet, LendParams: true, NotifyOnReader: true}) // HandleNotification keeps nothing of params, only queues
	go func() {
		_ = a.conn.Serve(context.Background(), time.Second)
		close(a.served)
	}()
	go func() {
		a.waitErr = cmd.Wait()
		close(a.exited)
		<-a.served
		send(agentGoneMsg{ag: a, err: a.waitErr, stderr: scrubText(a.stderr.String())})
	}()
	return a, nil
}

// HandleNotification turns session/update into an updateMsg, in order.
func (a *agent) HandleNotification(_ context.Context, method string, params json.RawMessage) {
	if method != "session/update" {
		return
	}
	params = scrubJSON(params) // scrub.go: what reaches the terminal
	// Most chunks of a fast stream join the run queued last: that is
	// done on the params as they are, allocating nothing.
	q, quick := scanChunk(params)
	if quick && a.joinQueued(&q) {
		return
	}
	var n struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	c, text := textChunk{}, false
	if quick {
		n.SessionID, c, text = q.chunk(&a.scratch)
	}
	if !text {
		if json.Unmarshal(params, &n) != nil {
			return
		}
		c, text = mergeable(n.Update)
	}
	// Updates are queued and the UI woken once per batch: one message,
	// one Update and one View per batch rather than per chunk, so that
	// keystrokes are not queued behind a fast stream; consecutive text
	// chunks of one message are merged into one update (coalesce.go). The
	// UI takes the queue at every message, so a response (or a question) sent after
	// these updates is handled after them.
	a.qmu.Lock()
	switch {
	case text && a.run != nil && a.queue[len(a.queue)-1].sessionID == n.SessionID && a.run.join(c):
	default:
		a.endRun()
		u := updateMsg{sessionID: n.SessionID, raw: n.Update}
		if text {
			u.raw, u.text = nil, &c // encoded again only if needed (rawUpdate)
			a.run = &merged{chunk: c, n: 1, text: a.runText[:0]}
			a.runText = nil
		}
		a.queue = append(a.queue, u)
	}
	wake, taken, hungry := !a.woken, a.taken, a.hungry
	a.woken, a.hungry = true, false
	a.qmu.Unlock()
	if hungry && !wake {
		a.send(fedMsg{}) // the wake on its way stays the one outstanding
		return
	}
	if wake && hungry {
		taken = time.Time{}
	}
	if wake {
		// At most one wake a frame: what comes meanwhile joins the
		// queue, and the event loop stays free for keys.
		if wait := updateFrame - time.Since(taken); wait > 0 {
			time.AfterFunc(wait, func() { a.send(updatesMsg{}) })
		} else {
			a.send(updatesMsg{})
		}
	}
}

// joinQueued appends a chunk to the run of text chunks at the end of the
// queue when it continues it. The UI is then already woken for the
// queue: the run was queued after its last take.
func (a *agent) joinQueued(q *quick) bool {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	return !a.hungry && a.run != nil && a.queue[len(a.queue)-1].sessionID == string(q.sid) && a.run.joinQuick(q)
}

// updateFrame is the shortest time between two wakes of the UI for
// updates: 60 a second, half the frames drawn (drawFPS), so that a key
// typed meanwhile is drawn at the next frame.
const updateFrame = time.Second / 60

// takeUpdates returns the queued updates, in order, and empties the
// queue. The UI takes them at every message; wake says the message is the
// updatesMsg the agent sent, and a later update may send another. (Were
// any message to allow a new wake, each key and print taken during a
// stream would add a wake to those on their way, and the UI, woken 600
// times a second instead of 60, would draw the stream's tail at each.)
func (a *agent) takeUpdates(wake bool) []updateMsg {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	a.endRun()
	q := a.queue
	if len(q) > 0 {
		a.taken, a.hungry = time.Now(), false
	}
	a.queue = nil
	if wake {
		a.woken = false
	}
	return q
}

// starve says the UI has printed all it had: the next update wakes it
// at once (hungry).
func (a *agent) starve() {
	a.qmu.Lock()
	a.hungry = true
	a.qmu.Unlock()
}

// dropRunText lets the run text buffer go: the turn ended.
func (a *agent) dropRunText() {
	a.qmu.Lock()
	a.runText = nil
	a.qmu.Unlock()
}

// endRun ends the run of text chunks at the end of the queue: it becomes
// one update there. The caller holds qmu.
func (a *agent) endRun() {
	if a.run == nil {
		return
	}
	if a.run.n > 1 {
		u := &a.queue[len(a.queue)-1]
		u.raw, u.text = nil, a.run.update() // the text copied
	}
	a.runText = a.run.text[:0]
	a.run = nil
}

// HandleRequest answers the agent's requests. The TUI advertises no file
// system or terminal capability, so the requests it gets are
// session/request_permission and elicitation/create (form mode), which
// wait for the user's answer.
func (a *agent) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	params = scrubJSON(params)
	if method == "elicitation/create" { // formkeys.go
		return a.elicit(ctx, params)
	}
	if method != "session/request_permission" {
		return nil, acp.MethodNotFound(method)
	}
	var req acp.RequestPermissionRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, acp.InvalidParams("invalid session/request_permission params", err.Error())
	}
	reply := make(chan string, 1)
	a.send(permissionMsg{req: &req, reply: reply})
	return acp.Deferred(func() (any, error) {
		var resp acp.RequestPermissionResponse
		select {
		case id := <-reply:
			if id == "" {
				resp.Outcome.Outcome = "cancelled"
			} else {
				resp.Outcome.Outcome, resp.Outcome.OptionID = "selected", id
			}
		case <-ctx.Done():
			// Withdrawn with $/cancel_request: its _meta may say who
			// answered (corvid serve, another client first).
			var by json.RawMessage
			var cr *acp.CancelRequested
			if errors.As(context.Cause(ctx), &cr) {
				by = answeredByMeta(cr.Params)
			}
			a.send(permissionDoneMsg{ag: a, req: &req, by: by})
			resp.Outcome.Outcome = "cancelled"
		}
		return resp, nil
	}), nil
}

// call makes a request of the agent.
func (a *agent) call(ctx context.Context, method string, params, result any) error {
	var raw json.RawMessage
	if err := a.conn.Call(ctx, method, params, &raw); err != nil {
		return scrubError(err)
	}
	if result == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(scrubJSON(raw), result); err != nil {
		return fmt.Errorf("decode %s result: %w", method, err)
	}
	return nil
}

// close ends the session as an editor does: stdin closes, the agent
// exits; one that does not within grace is killed.
func (a *agent) close(grace time.Duration) {
	_ = a.stdin.Close()
	select {
	case <-a.exited:
	case <-time.After(grace):
		killAgent(a.cmd)
		<-a.exited
	}
}

// updatesMsg says session/updates are queued.
type updatesMsg struct{}

// fedMsg says session/updates are queued for a UI that finished printing
// (hungry); unlike updatesMsg it leaves the wake on its way outstanding.
type fedMsg struct{}

// updateMsg is one session/update notification.
type updateMsg struct {
	sessionID string
	// raw is the update, nil when text holds it.
	raw json.RawMessage
	// text is the update decoded, when it is a chunk of plain text
	// (coalesce.go).
	text *textChunk
}

// rawUpdate is the update as JSON. A text chunk decoded on the agent's
// side is encoded again only here: a streamed answer's text is not
// encoded once more for nothing (merged runs of chunks were, every frame).
func (u updateMsg) rawUpdate() json.RawMessage {
	if u.raw == nil && u.text != nil {
		b, _ := json.Marshal(u.text)
		return b
	}
	return u.raw
}

// permissionMsg is a session/request_permission waiting for an optionId
// ("" cancels).
type permissionMsg struct {
	req   *acp.RequestPermissionRequest
	reply chan<- string
}

// permissionDoneMsg withdraws a question the agent stopped waiting for.
type permissionDoneMsg struct {
	ag  *agent
	req *acp.RequestPermissionRequest
	by  json.RawMessage // _meta["corvid.dev/answeredBy"] of the withdrawal, if any
}

// agentGoneMsg says the agent process ended.
type agentGoneMsg struct {
	ag     *agent
	err    error
	stderr string
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}

// rpcMessage is the text of an error from the agent, for the user.
func rpcMessage(err error) string {
	var e *acp.Error
	if errors.As(err, &e) {
		msg := e.Message
		if m, ok := e.Data.(map[string]any); ok {
			if d, ok := m["details"].(string); ok && d != "" {
				msg += ": " + d
			}
		}
		return msg
	}
	return err.Error()
}
