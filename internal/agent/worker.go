package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/tool"
)

// Detached workers and drain turns (docs/subagents.md, CodeBuddy's
// multitask C64–C74). With the session's multitask overlay on, the task
// tool's `background: true` starts a sub-agent that outlives the turn: the
// call returns at once, the parent may end its turn, and the worker keeps
// running on a context of the session (not of the turn), so only stopping
// it or closing the session ends it. Its updates and questions go the way
// a sub-agent's do (memberFront), with or without a turn running.
//
// A finished worker's answer waits in the session's inbox. The next turn
// takes the inbox: a prompt's turn gets it in front of the user's text;
// when the session is idle (its last turn answered, no prompt waiting) a
// drain turn with no user message is started for it instead. The drain
// turn opens with an EventDrainStarted and closes with an EventDrainEnded
// (a front end spells them: acpserver/drain.go); a prompt that comes
// meanwhile waits for it.

// DrainReason is a drain turn's reason (Drain.Reason).
const DrainReason = "background_drain"

// workers is a root session's detached workers and its inbox.
type workers struct {
	mu      sync.Mutex
	ctx     context.Context // the session's: cancelled by Close
	stop    context.CancelFunc
	running map[string]*worker // by member name
	inbox   []workerResult     // finished, not yet given to the model
	closing bool
	wg      sync.WaitGroup
}

// worker is one running detached worker.
type worker struct {
	id     string // its sub-agent session id
	name   string
	cancel context.CancelFunc
}

// workerResult is what a finished worker reports to its parent.
type workerResult struct {
	name, id, status, answer string
}

func newWorkers() *workers {
	ctx, stop := context.WithCancel(context.Background())
	return &workers{ctx: ctx, stop: stop, running: map[string]*worker{}}
}

// startWorker runs the task call call as a detached worker and returns at
// once.
func (s *Session) startWorker(in taskInput, call tool.Call) (tool.Result, error) {
	if s.sub.depth > 0 || s.workers == nil {
		return tool.ErrorResult("only the session's own agent can start background workers; run the task without background"), nil
	}
	if why := s.MultitaskUnavailable(); why != "" {
		return tool.ErrorResult("background workers are unavailable: " + why), nil
	}
	if !s.Multitask() {
		return tool.ErrorResult("background workers need the session's multitask overlay on (the user turns it on); run the task without background"), nil
	}
	ws := s.workers
	ws.mu.Lock()
	closing := ws.closing
	ws.mu.Unlock()
	if closing {
		return tool.ErrorResult("the session is closing"), nil
	}
	id := s.newMemberID()
	m, spec, err := s.enrol(s, in, call.ID, id)
	if err != nil {
		return tool.ErrorResult(err.Error()), nil
	}
	spec.background = true
	child := s.newChild(id, spec, m, call.ID)
	s.sub.team.track(m, child) // its session can be loaded (members.go)

	ctx, cancel := context.WithCancel(ws.ctx)
	w := &worker{id: child.ID, name: m.Name, cancel: cancel}
	ws.mu.Lock()
	ws.running[m.Name] = w
	ws.wg.Add(1)
	ws.mu.Unlock()
	t := child.startChildTurn(ctx, []Block{{Type: BlockText, Text: in.Prompt}})
	go s.runWorker(w, m, child, t)

	out := fmt.Sprintf("Started background worker %s (id %s). It works on its own: you may end your turn. Its answer comes back to you in a later message when it finishes.", m.Name, child.ID)
	return tool.Result{Output: out, Content: []tool.Content{textContent(out)}}, nil
}

// runWorker runs a worker's one turn, then puts its answer in the inbox
// and wakes the session; a worker the session's close stopped is recorded
// as interrupted.
func (s *Session) runWorker(w *worker, m *member, child *Session, t *Turn) {
	ws := s.workers
	defer ws.wg.Done()
	stop, runErr := t.Run()
	answer := child.finalAnswer()
	ws.mu.Lock()
	closing := ws.closing
	delete(ws.running, w.name)
	ws.mu.Unlock()
	w.cancel()
	s.sub.team.untrack(w.id)

	status := statusCompleted
	switch {
	case closing:
		status = statusInterrupted
	case runErr != nil:
		status = statusFailed
		answer = fmt.Sprintf("worker %s failed: %v", m.Name, runErr)
	case stop == StopCancelled:
		status = statusCancelled
		answer = fmt.Sprintf("worker %s was stopped", m.Name)
	case answer == "":
		answer = fmt.Sprintf("(worker %s ended (%s) without an answer)", m.Name, stop)
	}
	s.sub.team.finish(m, status)
	s.pushTeamStatus()
	if status == statusCancelled {
		return // stopped on request (team stop): whoever stopped it knows
	}
	if closing {
		// Recorded, so a load shows it (the team status too).
		s.Notify(fmt.Sprintf("[corvid] background worker %s (id %s) was interrupted: the session closed before it finished.", m.Name, w.id))
		return
	}
	ws.mu.Lock()
	ws.inbox = append(ws.inbox, workerResult{name: m.Name, id: w.id, status: status, answer: answer})
	ws.mu.Unlock()
	s.maybeDrain()
}

// StopWorker stops the running worker named name (a member name or its
// sub-agent id); its open questions end as refusals. It reports whether
// there was one.
func (s *Session) StopWorker(name string) bool {
	if s.workers == nil {
		return false
	}
	ws := s.workers
	var found *worker
	ws.mu.Lock()
	for _, w := range ws.running {
		if w.name == name || w.id == name {
			found = w
		}
	}
	ws.mu.Unlock()
	if found == nil {
		return false
	}
	found.cancel()
	return true
}

// stopWorkers (Close) stops every running worker and waits (bounded) for
// them to record that they were interrupted.
func (s *Session) stopWorkers() {
	ws := s.workers
	if ws == nil {
		return
	}
	ws.mu.Lock()
	ws.closing = true
	ws.mu.Unlock()
	ws.stop()
	done := make(chan struct{})
	go func() { ws.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(windDown):
	}
}

// takeInbox returns and clears the finished workers' answers as one text
// for the model ("" when there are none).
func (s *Session) takeInbox() string {
	ws := s.workers
	if ws == nil {
		return ""
	}
	ws.mu.Lock()
	in := ws.inbox
	ws.inbox = nil
	ws.mu.Unlock()
	if len(in) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<background-workers>\nThese background workers you started have finished:\n")
	for _, r := range in {
		fmt.Fprintf(&b, "\n## worker %s (id %s): %s\n\n%s\n", r.name, r.id, r.status, r.answer)
	}
	b.WriteString("</background-workers>")
	return b.String()
}

// inboxEmpty reports whether no finished worker waits.
func (s *Session) inboxEmpty() bool {
	ws := s.workers
	if ws == nil {
		return true
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.inbox) == 0 || ws.closing
}

// maybeDrain starts a drain turn when finished workers wait and the session
// is idle: its last turn ended and was answered, and no prompt waits. When
// it is not idle, the turn running now takes the inbox or wakes it again
// when it is answered.
func (s *Session) maybeDrain() {
	if s.inboxEmpty() {
		return
	}
	rid := newRequestID()
	t, ok := s.runner.startDrain(s, rid)
	if !ok {
		return
	}
	go t.runDrain(rid)
}

// Answered tells the session that the front end has written the turn's
// answer: from now on it is idle, and a drain turn may start.
func (t *Turn) Answered() {
	t.s.runner.mu.Lock()
	t.answered = true
	t.s.runner.mu.Unlock()
	t.s.maybeDrain()
}

// runDrain runs a drain turn: the opener, the finished workers' answers as
// the model's input, the model loop, the closer. It never counts as a
// prompt and records no user message.
func (t *Turn) runDrain(rid string) {
	s := t.s
	stop, err := t.drainLoop(rid)
	closer := &Drain{RequestID: rid, StopReason: string(stop)}
	if err != nil {
		closer.Error = userText(err)
	}
	s.conv.emit(Event{Kind: EventDrainEnded, Tags: Tags{Drain: closer}})
	t.end()
	// A worker that finished meanwhile gets the next drain turn.
	s.maybeDrain()
}

func (t *Turn) drainLoop(rid string) (StopReason, error) {
	s := t.s
	s.runner.emitFrom(t, false)
	s.conv.emit(Event{Kind: EventDrainStarted, Tags: Tags{Drain: &Drain{RequestID: rid, Reason: DrainReason}}})
	var err error
	var last int64
	if t.release, last, err = s.conv.acquire(s.agent.owner); err != nil {
		return "", err
	}
	t.storeMark = s.conv.storeFailures()
	if err := s.conv.syncWithStore(last); err != nil {
		return "", err
	}
	s.toolbox.awaitMCP(t.ctx)
	if t.ctx.Err() != nil {
		return StopCancelled, nil // the answers wait for the next turn
	}
	text := s.takeInbox()
	if text == "" {
		return StopEndTurn, nil
	}
	s.conv.appendHistory(llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text(text)}})
	s.runner.takeFinalOutput()
	stop, err := t.loop()
	if err != nil {
		s.conv.log.turnError(userText(err))
		return stop, err
	}
	s.conv.flush()
	if ferr := t.storeFault(); ferr != nil {
		return "", ferr
	}
	return stop, nil
}

// newRequestID is a drain turn's id: 32 random hex digits (the agent
// assigns it, C65).
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
