package agent

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Attach makes front a further front end of the live session (`corvid
// serve`: a second client loads a session another connection holds). It
// replays the stored history through replay (as LoadSession's Replay does;
// nil: none, session/resume), then hands front every event shown after it.
// Recording and showing an event happen under the conversation's show
// lock, and so does this: every event recorded before reaches front from
// the store (held text appended, its rows committed first), every later
// one live, none twice and none lost. The conversation's events fan out,
// and so does what ShowAll shows; questions go to the session's own front
// end (the server asks every client itself). It returns detach, which
// stops the events.
func (s *Session) Attach(ctx context.Context, front FrontEnd, replay func(Event), textMax int) (detach func(), err error) {
	c := s.conv
	// Asked before the show lock: a turn that runs (here or elsewhere)
	// has tool calls that are running, not interrupted.
	running := false
	if st := c.log.store; st != nil && replay != nil {
		running = s.Running() || runsElsewhere(ctx, st, s.ID)
	}
	c.show.Lock()
	defer c.show.Unlock()
	if st := c.log.store; st != nil && replay != nil {
		if n := c.log.last(); n > 0 && !c.log.settle(n, 5*time.Second) {
			return nil, storeFailure("store the session's events before the replay", errNotSettled)
		}
		lg, err := foldStream(ctx, st, s.ID, textMax, replay, running)
		if err != nil {
			return nil, storeFailure("read the events", err)
		}
		// Another process's rows the replay read and the front ends
		// here were not shown yet: shown to them now, and to front from
		// the replay; the later ones to all of them live.
		c.catchUpLocked(0, lg.LastSeq)
		replayDone(front)
	}
	c.fans = append(c.fans, front)
	return func() {
		c.show.Lock()
		defer c.show.Unlock()
		if i := slices.Index(c.fans, front); i >= 0 {
			c.fans = slices.Delete(c.fans, i, i+1)
		}
	}, nil
}

// ShowAll shows ev, which is not recorded (a command list, a settings
// change, the end of a turn), to every front end of the session, in its
// one place among the shown events: each attachment sees the same order.
func (s *Session) ShowAll(ev Event) {
	if s.conv.front == nil {
		return
	}
	ev.Transient = true
	s.conv.emit(ev)
}

// errNotSettled: the session's last events could not be committed in time.
var errNotSettled = errors.New("its last events were not committed within 5 s")

// last is the number of display events recorded so far.
func (l *eventLog) last() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recorded
}

// Answered records that by answered the question about tool call id (a
// permission, ask_user, exit_plan or an elicitation): the call's next
// update that has a status, the question's outcome, carries it, stored
// and shown to every front end (`corvid serve`: who answered, among the
// clients a question went to).
func (s *Session) Answered(id string, by Answerer) {
	s.conv.noteAnswer(id, by)
}

// noteAnswer keeps by until the update of tool call id that has a status.
func (c *conversation) noteAnswer(id string, by Answerer) {
	if id == "" {
		return
	}
	c.answeredMu.Lock()
	defer c.answeredMu.Unlock()
	if c.answered == nil || len(c.answered) >= maxAnswered {
		// A note no update took (a sub-agent's call shown under
		// another id) is dropped with the rest, never kept for long.
		c.answered = map[string]*Answerer{}
	}
	c.answered[id] = &by
}

// maxAnswered bounds the notes of Answered waiting for their update.
const maxAnswered = 64

// withAnswerer adds the note of Answered to the update of ev's tool call
// that has a status.
func (c *conversation) withAnswerer(ev Event) Event {
	if ev.Kind != EventToolCallState || ev.ToolCall == nil || ev.ToolCall.Status == "" {
		return ev
	}
	c.answeredMu.Lock()
	by := c.answered[ev.ToolCall.ID]
	delete(c.answered, ev.ToolCall.ID)
	c.answeredMu.Unlock()
	if by == nil {
		return ev
	}
	tc := *ev.ToolCall
	tc.AnsweredBy = by
	ev.ToolCall = &tc
	return ev
}

// shownPrompt is a recorded prompt and the front ends to show it to: all
// of the session's but the one that sent it.
type shownPrompt struct {
	events []Event
	to     []FrontEnd
}

// promptFor is the prompt evs, from from, to show the session's other
// front ends; nil when there are none. A prompt from no front end in
// particular (StartTurn) is the session's own front end's. Call it under
// the show lock.
func (c *conversation) promptFor(evs []Event, from FrontEnd) *shownPrompt {
	if len(evs) == 0 {
		return nil
	}
	if from == nil {
		from = c.front
	}
	var to []FrontEnd
	for _, f := range append([]FrontEnd{c.front}, c.fans...) {
		if f != nil && f != from {
			to = append(to, f)
		}
	}
	if len(to) == 0 {
		return nil
	}
	return &shownPrompt{events: evs, to: to}
}

// promptLeft shows the other front ends a recorded prompt whose turn
// ended before it showed anything (cancelled as it started), which
// promptShown had no event to go with. Called after the turn's rows were
// flushed, so the prompt is stored as a load would replay it.
func (c *conversation) promptLeft() {
	c.show.Lock()
	defer c.show.Unlock()
	p := c.prompt
	c.prompt = nil
	if p == nil {
		return
	}
	for _, f := range p.to {
		if f != c.front && !slices.Contains(c.fans, f) {
			continue // detached since
		}
		for _, ev := range p.events {
			f.Emit(ev)
		}
	}
}

// promptShown shows p to its front ends that are still attached, right
// before the turn's first shown event n (under the show lock), each user
// chunk shown once its rows are stored (with event n's, in one
// transaction). A front end that attached after
// the prompt was recorded replayed it, and is not among p's.
func (c *conversation) promptShown(p *shownPrompt, n uint64) {
	if p == nil {
		return
	}
	var stored func() bool
	if c.log.store != nil {
		stored = func() bool { return c.settle(n) && !c.log.rowFailed(n) }
	}
	for _, f := range p.to {
		if f != c.front && !slices.Contains(c.fans, f) {
			continue // detached since
		}
		for _, ev := range p.events {
			ev.Stored = stored
			f.Emit(ev)
		}
	}
}
