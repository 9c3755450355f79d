package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
)

// What a session's event log holds, besides the display events (whose kinds
// are the EventKind values): the model context, so a loaded session
// continues with full memory.
const (
	recordContext      = "context"       // one llm.Message appended to the model context
	recordContextReset = "context_reset" // the whole model context replaced ([]llm.Message)
)

// ErrSessionNotFound is returned for a session id the store does not know.
var ErrSessionNotFound = errors.New("session not found")

// ErrBusyElsewhere means another corvid process is running a turn of the
// same session.
var ErrBusyElsewhere = errors.New("session is busy in another corvid process")

// emit records ev, then delivers it to the front end.
func (s *Session) emit(ev Event) {
	s.record(ev)
	s.front.Emit(ev)
}

func (s *Session) record(ev Event) {
	if s.store == nil {
		return
	}
	b, err := json.Marshal(ev)
	if err == nil {
		err = s.store.Append(s.ID, string(ev.Kind), b)
	}
	if err == nil {
		s.appended()
	}
	if err != nil {
		s.agent.cfg.Logger.Error("record event", "session", s.ID, "err", err)
	}
}

func (s *Session) recordRaw(kind string, v any) {
	if s.store == nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		err = s.store.Append(s.ID, kind, b)
	}
	if err == nil {
		s.appended()
	}
	if err != nil {
		s.agent.cfg.Logger.Error("record", "session", s.ID, "kind", kind, "err", err)
	}
}

// appendHistory adds messages to the model context and records them.
func (s *Session) appendHistory(msgs ...llm.Message) {
	s.mu.Lock()
	s.history = append(s.history, msgs...)
	s.mu.Unlock()
	for _, m := range msgs {
		s.recordRaw(recordContext, m)
	}
}

// resetHistory replaces the model context and records the new one whole.
func (s *Session) resetHistory(f func([]llm.Message) []llm.Message) {
	s.mu.Lock()
	s.history = f(s.history)
	h := append([]llm.Message(nil), s.history...)
	s.mu.Unlock()
	s.recordRaw(recordContextReset, h)
}

// recordPrompt stores the user's prompt for replay (the client already
// shows it, so it is not emitted live).
func (s *Session) recordPrompt(blocks []Block) {
	id := NewID("user")
	for i := range blocks {
		s.record(Event{Kind: EventUserChunk, MessageID: id, Content: &blocks[i]})
	}
}

func (s *Session) setTitle(title string) {
	now := time.Now().UTC()
	if s.store != nil {
		if err := s.store.UpdateSession(context.Background(), s.ID, func(ss *store.Session) { ss.Title = title }); err != nil {
			s.agent.cfg.Logger.Error("update session title", "session", s.ID, "err", err)
		}
	}
	s.emit(Event{Kind: EventInfo, Title: title, UpdatedAt: now.Format(time.RFC3339)})
}

// acquire takes the cross-process turn lease.
func (s *Session) acquire() (func(), error) {
	if s.store == nil {
		return nil, nil
	}
	release, err := s.store.Acquire(context.Background(), s.ID, s.agent.owner)
	if errors.Is(err, store.ErrBusy) {
		return nil, fmt.Errorf("%w: %v", ErrBusyElsewhere, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: cannot take the session's turn lease: %v", ErrStore, err)
	}
	return release, nil
}

func (s *Session) flush() {
	if s.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.store.Flush(ctx); err != nil {
		s.agent.cfg.Logger.Error("flush session store", "session", s.ID, "err", err)
	}
}

// ErrStore marks a failure of the session store (its message names the
// database file).
var ErrStore = errors.New("session store")

// openStore opens the store on first use, so start-up stays fast. A failed
// open is retried on the next use: moving a corrupt file aside must not
// need a restart.
func (a *Agent) openStore() (*store.Store, error) {
	if a.cfg.StorePath == "" {
		return nil, nil
	}
	a.stMu.Lock()
	defer a.stMu.Unlock()
	if a.st != nil || a.stClosed {
		return a.st, nil
	}
	st, err := store.Open(a.cfg.StorePath)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStore, err)
	}
	a.st = st
	return st, nil
}

// Close flushes and closes the store.
func (a *Agent) Close() error {
	a.stMu.Lock()
	defer a.stMu.Unlock()
	a.stClosed = true
	if a.st != nil {
		return a.st.Close()
	}
	return nil
}

// LoadSession restores a stored session: its model context (so the next
// prompt continues with full memory) and, for replay, its display history.
func (a *Agent) LoadSession(ctx context.Context, o SessionOptions) (*Session, []Event, error) {
	st, err := a.openStore()
	if err != nil {
		return nil, nil, err
	}
	if st == nil {
		return nil, nil, ErrSessionNotFound
	}
	meta, err := st.GetSession(ctx, o.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, ErrSessionNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	events, err := st.Events(ctx, o.ID)
	if err != nil {
		return nil, nil, err
	}
	sc, err := a.sessionConfig(o.Cwd)
	if err != nil {
		return nil, nil, err
	}
	s, err := a.newSession(o, st, sc)
	if err != nil {
		return nil, nil, err
	}
	s.restoreControls(meta)
	replay, history, turns := rebuild(events, s.toolIDs)
	s.history = repairHistory(history)
	s.turns = turns
	if n := len(events); n > 0 {
		s.knownSeq.Store(events[n-1].Seq)
	}
	// The context meter carries over, so a full session compacts on its
	// next turn.
	for i := len(replay) - 1; i >= 0; i-- {
		if replay[i].Kind == EventUsage && replay[i].Usage != nil {
			s.lastUsed = replay[i].Usage.Used
			break
		}
	}
	if o.Cwd != meta.Cwd || !sameStrings(o.Roots, meta.AdditionalDirs) {
		_ = st.UpdateSession(ctx, o.ID, func(ss *store.Session) { ss.Cwd, ss.AdditionalDirs = o.Cwd, o.Roots })
	}
	return s, replay, nil
}

// rebuild folds the event log into the replay (consecutive chunks of one
// message merged; each tool call followed by its final state) and the model
// context.
func rebuild(events []store.Event, toolIDs map[string]bool) (replay []Event, history []llm.Message, turns int) {
	finals := map[string]int{} // tool call id -> index of its final update in replay
	var usage *Event
	lastUser := ""
	// unsaved is the agent text streamed since the model context was last
	// recorded: an answer cut short by a crash, which the context must keep.
	var unsaved strings.Builder
	for _, e := range events {
		switch e.Kind {
		case recordContext:
			var m llm.Message
			if json.Unmarshal(e.Payload, &m) == nil {
				history = append(history, m)
			}
			unsaved.Reset()
			continue
		case recordContextReset:
			var h []llm.Message
			if json.Unmarshal(e.Payload, &h) == nil {
				history = h
			}
			unsaved.Reset()
			continue
		}
		var ev Event
		if json.Unmarshal(e.Payload, &ev) != nil {
			continue
		}
		if ev.Kind == EventMessageChunk && ev.Content != nil && ev.Content.Type == BlockText {
			unsaved.WriteString(ev.Content.Text)
		}
		switch ev.Kind {
		case EventUserChunk, EventMessageChunk, EventThoughtChunk:
			if ev.Kind == EventUserChunk && ev.MessageID != lastUser {
				lastUser = ev.MessageID
				turns++
			}
			if n := len(replay); n > 0 && ev.Content != nil && ev.Content.Type == BlockText {
				prev := &replay[n-1]
				if prev.Kind == ev.Kind && prev.MessageID == ev.MessageID && prev.Content != nil && prev.Content.Type == BlockText {
					merged := *prev.Content
					merged.Text += ev.Content.Text
					prev.Content = &merged
					continue
				}
			}
			replay = append(replay, ev)
		case EventToolCall:
			if ev.ToolCall == nil {
				continue
			}
			toolIDs[ev.ToolCall.ID] = true
			replay = append(replay, ev)
			final := Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: ev.ToolCall.ID, Status: ev.ToolCall.Status}}
			replay = append(replay, final)
			finals[ev.ToolCall.ID] = len(replay) - 1
		case EventToolCallState:
			if ev.ToolCall == nil {
				continue
			}
			i, ok := finals[ev.ToolCall.ID]
			if !ok {
				continue
			}
			mergeToolCall(replay[i].ToolCall, ev.ToolCall)
		case EventPlan:
			replay = append(replay, ev)
		case EventUsage:
			u := ev
			usage = &u
		}
	}
	// A tool call that never finished was interrupted (the process died).
	for _, i := range finals {
		tc := replay[i].ToolCall
		if tc.Status != ToolCompleted && tc.Status != ToolFailed {
			tc.Status = ToolFailed
			tc.Content = append(tc.Content, textContent("interrupted: corvid stopped before this tool call finished"))
		}
	}
	if usage != nil {
		replay = append(replay, *usage)
	}
	if unsaved.Len() > 0 && len(history) > 0 && history[len(history)-1].Role == llm.RoleUser {
		history = append(history, llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
			llm.Text(unsaved.String() + "\n\n[This answer was interrupted: corvid stopped before it finished.]")}})
	}
	return replay, history, turns
}

func mergeToolCall(dst, upd *ToolCall) {
	if upd.Status != "" {
		dst.Status = upd.Status
	}
	if upd.Title != "" {
		dst.Title = upd.Title
	}
	if upd.Kind != "" {
		dst.Kind = upd.Kind
	}
	if upd.Content != nil {
		dst.Content = upd.Content
	}
	if upd.Locations != nil {
		dst.Locations = upd.Locations
	}
	if upd.RawOutput != nil {
		dst.RawOutput = upd.RawOutput
	}
}

// repairHistory makes a context restored after a crash valid for the next
// model call: every tool use gets a result.
func repairHistory(h []llm.Message) []llm.Message {
	if len(h) == 0 {
		return h
	}
	last := h[len(h)-1]
	if last.Role != llm.RoleAssistant {
		return h
	}
	var results []llm.Part
	for _, p := range last.Parts {
		if p.Type == llm.PartToolUse {
			results = append(results, llm.Part{Type: llm.PartToolResult, ToolUseID: p.ToolUseID, Text: "interrupted: corvid stopped before this tool call ran", IsError: true})
		}
	}
	if len(results) > 0 {
		h = append(h, llm.Message{Role: llm.RoleUser, Parts: results})
	}
	return h
}

// SessionInfo describes a stored session.
type SessionInfo struct {
	ID             string
	Cwd            string
	AdditionalDirs []string
	Title          string
	UpdatedAt      time.Time
}

// ListSessions lists stored sessions, newest first.
func (a *Agent) ListSessions(ctx context.Context, cwd, cursor string) ([]SessionInfo, string, error) {
	st, err := a.openStore()
	if err != nil || st == nil {
		return nil, "", err
	}
	list, next, err := st.List(ctx, store.ListOptions{Cwd: cwd, Cursor: cursor})
	if err != nil {
		return nil, "", err
	}
	out := make([]SessionInfo, 0, len(list))
	for _, ss := range list {
		out = append(out, SessionInfo{ID: ss.ID, Cwd: ss.Cwd, AdditionalDirs: ss.AdditionalDirs, Title: ss.Title, UpdatedAt: ss.UpdatedAt})
	}
	return out, next, nil
}

// ErrBadCursor is returned by ListSessions for a cursor it did not issue.
var ErrBadCursor = store.ErrBadCursor

// DeleteSession removes a stored session. Unknown ids are not an error.
func (a *Agent) DeleteSession(ctx context.Context, id string) error {
	st, err := a.openStore()
	if err != nil || st == nil {
		return err
	}
	return st.Delete(ctx, id)
}

// ForkSession copies a stored session's history into a new session id.
func (a *Agent) ForkSession(ctx context.Context, srcID string, o SessionOptions) error {
	st, err := a.openStore()
	if err != nil {
		return err
	}
	if st == nil {
		return ErrSessionNotFound
	}
	if err := st.Flush(ctx); err != nil {
		return err
	}
	err = st.Fork(ctx, srcID, store.Session{ID: o.ID, Cwd: o.Cwd, AdditionalDirs: o.Roots})
	if errors.Is(err, store.ErrNotFound) {
		return ErrSessionNotFound
	}
	return err
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func processOwner() string { return fmt.Sprintf("pid%d-%s", os.Getpid(), NewID("o")) }

// Sync makes every event recorded so far durable. The ACP writer calls it
// before frames leave, so what a client has seen survives a kill -9; group
// commit keeps it cheap (one commit serves every frame queued meanwhile).
//
// An error means some event recorded since the last Sync is not stored: the
// caller must not send what reports it (the client would see what a reload
// cannot show).
func (a *Agent) Sync() error {
	a.stMu.Lock()
	st := a.st
	a.stMu.Unlock()
	if st == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := st.Flush(ctx)
	if err != nil {
		a.cfg.Logger.Error("session store commit", "err", err)
	}
	// Flush's error goes to whichever caller flushes first (a turn ending
	// may take it); the failure count tells every caller.
	if n := st.CommitFailures(); n != a.syncedFailures.Swap(n) {
		if err == nil {
			err = errors.New("a commit failed")
		}
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	return nil
}

// storeFailures counts the store's failed commits (0 without a store).
func (s *Session) storeFailures() uint64 {
	if s.store == nil {
		return 0
	}
	return s.store.CommitFailures()
}

// storeFault returns an error once a commit failed after the turn began:
// the turn stops rather than go on with events nobody can reload.
func (t *Turn) storeFault() error {
	if t.s.storeFailures() == t.storeMark {
		return nil
	}
	return fmt.Errorf("%w: events of this turn could not be saved (is the disk full?), so the turn was stopped; see the log for the database error", ErrStore)
}
