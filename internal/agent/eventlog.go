package agent

import (
	"cmp"
	"slices"

	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
)

// The event log is a session's stored history: one row per display event
// (its kind is the EventKind, its payload the Event as JSON) and, between
// them, records of the model context (below), so a loaded session continues
// with full memory. This file is the format's only writer (eventLog) and
// only reader (Fold); replay, cross-process sync and `corvid sessions` all
// read through Fold.
const (
	recordContext      = "context"       // one llm.Message appended to the model context
	recordContextReset = "context_reset" // the whole model context replaced ([]llm.Message)
	// recordTurnError: a turn ended with an error ({"message": what the
	// user was told}). Releases before it skip the row.
	recordTurnError = "turn_error"
	// recordContextText: a piece of a long text of the context record
	// that follows ({"part": index, "text": piece}); that record holds
	// the part with its text empty (contextText).
	recordContextText = "context_text"
)

// EventTurnError is the Entry kind of a turn that ended with an error (its
// Content holds the message). It is never sent to a front end: the
// prompt's answer carried the error.
const EventTurnError EventKind = "turn_error"

// turnErrorRecord is a turn_error row's payload.
type turnErrorRecord struct {
	Message string `json:"message"`
}

// eventLog appends a session's rows to the store. A nil store keeps
// nothing (an in-memory session).
//
// A streamed answer's text chunks are merged: the log holds the current
// message's text back (store.Hold) and appends it as one row when another
// row follows, when it grows past maxHeldText, or when the store asks
// (before any commit the front end waits for, so a shown chunk is stored
// before it is shown). Fold merges chunks of one message, so replay is the
// same either way.
type eventLog struct {
	id    string
	store *store.Store
	log   *slog.Logger
	// knownSeq is the stored log's last seq as far as this process knows:
	// each row this process appends moves it one on; another process's
	// rows show up as a gap (see conversation.syncWithStore).
	knownSeq atomic.Int64

	mu sync.Mutex // orders appends; guards the held chunk and the counts below
	// held is the chunk whose message's later chunks are merged into it:
	// its row as it is written (heldrow.go).
	held heldRow
	drop func() // ends the store's hold (nil: none registered)
	// Display events recorded so far, how many of them are in appended
	// rows, the store's ticket for those rows, and the last event whose
	// row could not be appended: what settle needs to make one event
	// durable without waiting for the rest.
	recorded, appended, ticket, lost uint64
	// rows are the latest appends (oldest first): through which display
	// event each one went and its ticket, so settle waits for an event's
	// own row and not for the rows appended after it.
	rows []appendMark
	// answer is the answer text in the rows appended since the model
	// context was last recorded, as Fold gathers it back (contexttext.go):
	// a context record whose text is that text refers to it instead of
	// storing it a second time.
	answer streamedAnswer
}

// appendMark is one append: display events up to n are in rows at or
// before ticket.
type appendMark struct{ n, ticket uint64 }

// maxAppendMarks bounds eventLog.rows. An event older than the oldest
// mark waits for that mark's ticket: later than its own row, never
// earlier.
const maxAppendMarks = 64

// maxHeldText and maxHeldFor bound what one row merges. A process killed
// mid-answer loses the text held then: in ACP none the editor was shown
// (every write of frames asks the store first); print mode prints without
// asking, so it may lose the text of the last chunks it printed.
const (
	maxHeldText = 64 << 10
	maxHeldFor  = 20 * time.Millisecond
)

// event records a display event and returns its number, for settle.
func (l *eventLog) event(ev Event) uint64 {
	n, _ := l.eventWire(ev)
	return n
}

// eventWire is event that also returns, for a text chunk whose row is
// written by hand, its text in wire form (Event.TextWire; else "").
func (l *eventLog) eventWire(ev Event) (n uint64, wire string) {
	if l.store == nil {
		return 0, ""
	}
	merge := mergeable(&ev)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answer.add(&ev)
	if merge && l.held.takes(&ev) {
		if wire, ok := l.held.add(ev.Content.Text); ok {
			l.recorded++
			return l.recorded, wire
		}
	}
	l.releaseLocked()
	l.recorded++
	if !merge {
		l.appendLocked(string(ev.Kind), ev)
		return l.recorded, ""
	}
	if l.drop == nil {
		l.drop = l.store.Hold(l.id, l.release)
	}
	return l.recorded, l.held.start(&ev)
}

// settle makes display event n (from event) durable: it appends the held
// text if n is in it, and waits until the store has committed n's row and
// every row before it, and not the rows appended after. It reports false
// when that row could not be appended or wait passed first; whether the
// commit succeeded is the store's failure count's to tell.
func (l *eventLog) settle(n uint64, wait time.Duration) bool {
	return l.settleBy(n, wait, false)
}

// settleNow is settle for an event to be shown at once (a turn's first):
// when no commit is running, this goroutine commits its row itself
// (store.CommitNow).
func (l *eventLog) settleNow(n uint64, wait time.Duration) bool {
	return l.settleBy(n, wait, true)
}

func (l *eventLog) settleBy(n uint64, wait time.Duration, now bool) bool {
	if l.store == nil {
		return true
	}
	l.mu.Lock()
	if l.appended < n {
		l.releaseLocked()
	}
	ticket, lost := l.ticketOf(n), l.lost >= n
	l.mu.Unlock()
	if lost {
		return false
	}
	if l.store.IsCommitted(ticket) {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if now {
		return l.store.CommitNow(ctx, ticket) == nil
	}
	return l.store.AwaitCommit(ctx, ticket) == nil
}

// rowFailed reports whether the row that carries display event n (once
// settled) failed to be committed (store.CommitFailed).
func (l *eventLog) rowFailed(n uint64) bool {
	if l.store.CommitFailures() == 0 {
		return false // the usual case, without a lock
	}
	l.mu.Lock()
	ticket := l.ticketOf(n)
	l.mu.Unlock()
	return l.store.CommitFailed(l.id, ticket)
}

// ticketOf returns the ticket of the first append that carried display
// event n (appended ≥ n): the oldest remembered one when n is older.
func (l *eventLog) ticketOf(n uint64) uint64 {
	i, _ := slices.BinarySearchFunc(l.rows, n, func(m appendMark, n uint64) int { return cmp.Compare(m.n, n) })
	if i == len(l.rows) {
		return l.ticket
	}
	return l.rows[i].ticket
}

// mergeable reports whether ev is a streamed text chunk that says nothing
// but its text (and the meta it shares with the chunks around it).
func mergeable(ev *Event) bool {
	return (ev.Kind == EventMessageChunk || ev.Kind == EventThoughtChunk) && plainText(ev.Content) &&
		ev.ToolCall == nil && ev.Plan == nil && ev.Usage == nil && ev.Title == "" && ev.UpdatedAt == "" &&
		ev.ModeID == "" && ev.Commands == nil
}

// sameMap reports whether a and b are the same map (both nil, or one
// instance): a turn tags its chunks with one map, and comparing contents
// per chunk would cost more than the merge saves.
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// plainText reports whether b is a text block and nothing more.
func plainText(b *Block) bool {
	return b != nil && b.Type == BlockText && b.MimeType == "" && b.Data == nil && b.URI == "" && b.Name == "" && b.Title == "" && !b.Blob
}

// release appends the held chunk, if any.
func (l *eventLog) release() {
	l.mu.Lock()
	l.releaseLocked()
	l.mu.Unlock()
}

func (l *eventLog) releaseLocked() {
	if l.held.ev == nil {
		return
	}
	kind := string(l.held.ev.Kind)
	if row := l.held.row(); row != nil {
		l.appendRowLocked(kind, row, nil)
		return
	}
	l.appendLocked(kind, l.held.event())
}

// close appends what the log holds and ends its hold.
func (l *eventLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked()
	if l.drop != nil {
		l.drop()
		l.drop = nil
	}
}

// context records one message appended to the model context.
func (l *eventLog) context(m llm.Message) {
	if l.store == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked()
	l.appendLocked(recordContext, l.contextTextLocked(m))
}

// turnError records that a turn ended with an error the user was told.
func (l *eventLog) turnError(message string) { l.append(recordTurnError, turnErrorRecord{message}) }

// contextReset records the whole model context after it was replaced.
func (l *eventLog) contextReset(h []llm.Message) { l.append(recordContextReset, h) }

func (l *eventLog) append(kind string, v any) {
	if l.store == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked()
	l.appendLocked(kind, v)
}

func (l *eventLog) appendLocked(kind string, v any) {
	b, err := json.Marshal(v)
	l.appendRowLocked(kind, b, err)
}

// appendRowLocked appends a row whose payload b (fresh: the store keeps
// it) was encoded, or failed to be (err).
func (l *eventLog) appendRowLocked(kind string, b []byte, err error) {
	if err == nil {
		err = l.store.AppendOwned(l.id, kind, b) // b is fresh: no copy
	}
	l.appended = l.recorded
	if kind == recordContext || kind == recordContextReset {
		l.answer.reset() // as Fold forgets what it gathered
	}
	if err != nil {
		l.answer.lost = true
		l.lost = l.recorded
		l.log.Error("record event", "session", l.id, "kind", kind, "err", err)
		return
	}
	l.ticket = l.store.Appended()
	if len(l.rows) == maxAppendMarks {
		l.rows = append(l.rows[:0], l.rows[maxAppendMarks/2:]...)
	}
	l.rows = append(l.rows, appendMark{l.recorded, l.ticket})
	l.knownSeq.Add(1)
}

// Log is a session's event log read back by Fold.
type Log struct {
	// entries are the display items in order (see Entries), in blocks of
	// entryBlock: a long log is never copied to grow, and allocated in
	// pieces the allocator keeps small.
	entries [][]Entry
	n       int // how many entries
	// first is how many blocks a streaming fold (foldstore.go) gave out
	// and dropped from the front of entries; spare is the last of them,
	// emptied, for the next block.
	first int
	spare []Entry
	// Usage is the last context meter reading (nil: none recorded).
	Usage *Usage
	// History is the model context, made valid for the next model call (a
	// tool use cut off by a crash gets an error result; an answer cut off
	// is kept with a note).
	History []llm.Message
	// Turns counts the user prompts.
	Turns int
	// ToolIDs are the ids of every tool call in the log.
	ToolIDs []string
	// LastSeq is the seq of the last row (0 for an empty log).
	LastSeq int64
	// lastPayload is the last row's payload (follow.go: the base of the
	// next row, which may be a delta of it).
	lastPayload []byte
	// Team is the last member_status_change of the session's team (nil:
	// no team, or it was deleted).
	Team map[string]any
	// Tokens sums every model response's usage in the log.
	Tokens llm.Usage
	// LastError is the error the last turn ended with ("" when it ended
	// normally or there was none).
	LastError string
}

// entryBlock is how many entries one block of a Log holds (23.5 KB).
const entryBlock = 128

// Entries returns the display items in order: one per message (its text
// chunks merged), per tool call (with its final state) and per plan.
func (l *Log) Entries() []Entry {
	out := make([]Entry, 0, l.n)
	for _, b := range l.entries {
		out = append(out, b...)
	}
	return out
}

// entry is the i-th entry.
func (l *Log) entry(i int) *Entry { return &l.entries[i/entryBlock-l.first][i%entryBlock] }

// add appends an entry.
func (l *Log) add(e *Entry) {
	if l.n%entryBlock == 0 {
		b := l.spare
		if b == nil {
			b = make([]Entry, 0, entryBlock)
		}
		l.entries, l.spare = append(l.entries, b), nil
	}
	b := &l.entries[len(l.entries)-1]
	*b = append(*b, *e)
	l.n++
}

// addOwn is add for an entry whose Content is borrowed (a row decoder's):
// the entry gets a copy of its own, kept in the entry.
func (l *Log) addOwn(e *Entry) {
	l.add(e)
	slot := l.entry(l.n - 1)
	slot.block = *e.Content
	slot.Content = &slot.block
}

// Entry is one display item of a folded log.
type Entry struct {
	// Event is the item's first event: a chunk (for text, Content holds
	// the whole message's text), a tool_call as first announced, or a plan.
	Event
	// Final is a tool call's final state: its id and every field its
	// updates changed (the status is the first one when none did).
	Final *ToolCall
	// Interrupted marks a tool call that never finished (the process
	// stopped during it).
	Interrupted bool
	// block holds Content when it was decoded for the entry (addOwn).
	block Block
}

// interruptedNote is what the replay adds to an interrupted tool call.
const interruptedNote = "interrupted: corvid stopped before this tool call finished"

// Replay is the log as the events a front end replays on session/load:
// each message once, each tool call followed by its final state (an
// interrupted one failed), and the last usage reading at the end.
func (l *Log) Replay() []Event {
	out := make([]Event, 0, l.n+1)
	for ev := range l.Replayed() {
		out = append(out, ev)
	}
	return out
}

// Replayed yields the events of Replay one by one, without a copy of the
// log.
func (l *Log) Replayed() iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for i := range l.n {
			if !replayEntry(l.entry(i), yield) {
				return
			}
		}
		if l.Usage != nil {
			yield(Event{Kind: EventUsage, Usage: l.Usage})
		}
	}
}

// replayEntry yields the events that replay e; false when yield said stop.
func replayEntry(e *Entry, yield func(Event) bool) bool {
	if e.Kind == EventTurnError {
		return true
	}
	if !yield(e.Event) {
		return false
	}
	if e.Final == nil {
		return true
	}
	final := *e.Final
	if e.Interrupted {
		final.Status = ToolFailed
		final.Content = append(final.Content[:len(final.Content):len(final.Content)], textContent(interruptedNote))
	}
	return yield(Event{Kind: EventToolCallState, ToolCall: &final, Tags: e.Tags})
}

// Fold reads a session's stored rows in one pass. Its cost is linear in the
// log: each message's text is built once, not re-copied per chunk.
func Fold(rows []store.Event) *Log {
	f := newFolder()
	for i := range rows {
		f.row(&rows[i])
	}
	return f.finish()
}

// folder is Fold's state between rows.
type folder struct {
	log    *Log
	finals map[string]int // tool call id → its entry
	// run holds the text of the last entry while text chunks of its
	// message keep coming; inRun says it does.
	run   strings.Builder
	inRun bool
	// unsaved is the agent text streamed since the model context was last
	// recorded: an answer cut short by a crash, which the context keeps.
	unsaved  strings.Builder
	lastUser string
	// pieces are the texts of the next context row's parts, by index,
	// from the context_text rows before it; answer is unsaved as text,
	// for the pieces that are cut from it (haveAnswer: it is).
	pieces     map[int]*strings.Builder
	answer     string
	haveAnswer bool
	// dec.wire: text chunks are kept in wire form (Block.TextJSON), and so
	// are run and unsaved.
	dec    rowDecoder
	runLen int // the text length of run, in wire form
	// emit, when set, gets the replay as the rows are read (FoldStream);
	// sent counts the entries given to it.
	emit    func(Event)
	sent    int
	maxText int // FoldStream's
	// running: a turn of the session runs now (here or in another
	// process), so a tool call without a final state is still running.
	running bool
}

func (f *folder) row(r *store.Event) {
	f.log.LastSeq = r.Seq
	f.log.lastPayload = append(f.log.lastPayload[:0], r.Payload...)
	if r.Kind == recordContextText {
		f.contextText(r.Payload)
		return
	}
	// Pieces belong to the context row right after them; any other row
	// (a crash cut them off) drops them.
	pieces := f.pieces
	f.pieces, f.answer, f.haveAnswer = nil, "", false
	switch r.Kind {
	case recordContext:
		if m, ok := f.dec.message(r.Payload); ok || json.Unmarshal(r.Payload, &m) == nil {
			fillContextText(&m, pieces)
			if m.Role == llm.RoleUser {
				// The next prompt (or tool results) after an answer
				// that was cut and never recorded.
				f.cutAnswer()
			}
			f.log.History = append(f.log.History, m)
		}
		f.unsaved.Reset()
		return
	case recordContextReset:
		var h []llm.Message
		if json.Unmarshal(r.Payload, &h) == nil {
			f.log.History = h
		}
		f.unsaved.Reset()
		return
	case recordTurnError:
		var te turnErrorRecord
		if json.Unmarshal(r.Payload, &te) == nil {
			f.log.LastError = te.Message
			f.add(Entry{Event: Event{Kind: EventTurnError, Content: &Block{Type: BlockText, Text: te.Message}}})
		}
		return
	}
	var ev Event
	if !f.dec.chunk(r.Payload, &ev) {
		var slow Event // on the heap (Unmarshal keeps its pointer): only when needed
		if json.Unmarshal(r.Payload, &slow) != nil {
			return
		}
		ev = slow
		if f.dec.wire && isText(ev.Content) {
			b := ev.Content
			b.TextJSON, b.TextLen, b.Text = escapeJSON(b.Text), len(b.Text), ""
		}
	}
	switch ev.Kind {
	case EventUserChunk, EventMessageChunk, EventThoughtChunk:
		f.chunk(ev)
	case EventToolCall:
		if ev.ToolCall != nil {
			f.toolCall(ev)
		}
	case EventToolCallState:
		if ev.ToolCall != nil {
			f.toolUpdate(ev.ToolCall)
		}
	case EventPlan:
		f.add(Entry{Event: ev})
	case EventUsage:
		if ev.Usage != nil {
			f.log.Usage = ev.Usage
			addTokens(&f.log.Tokens, ev.Usage.Tokens)
		}
	case EventTeam:
		f.team(ev.Team)
	case EventDrainStarted, EventDrainEnded:
		f.add(Entry{Event: ev}) // a drain turn's opener or closer (worker.go)
	}
}

// team follows a session's team updates.
func (f *folder) team(tu TeamUpdate) {
	switch tu["type"] {
	case "member_status_change":
		f.log.Team = tu
	case "team_deleted":
		f.log.Team = nil
	}
}

func isText(b *Block) bool { return b != nil && b.Type == BlockText }

func (f *folder) chunk(ev Event) {
	if answerChunk(&ev) {
		f.unsaved.WriteString(ev.Content.text())
	}
	if ev.Kind == EventUserChunk && ev.MessageID != f.lastUser {
		f.lastUser = ev.MessageID
		f.log.Turns++
		f.log.LastError = ""
	}
	if n := f.log.n; n > 0 && isText(ev.Content) {
		prev := f.log.entry(n - 1)
		if prev.Kind == ev.Kind && prev.MessageID == ev.MessageID && isText(prev.Content) {
			if !f.inRun {
				f.run.WriteString(prev.Content.text())
				f.runLen = prev.Content.TextLen
				f.inRun = true
			}
			f.run.WriteString(ev.Content.text())
			f.runLen += ev.Content.TextLen
			f.givePieces()
			return
		}
	}
	f.add(Entry{Event: ev})
}

// add closes the text run of the last entry and appends e.
func (f *folder) add(e Entry) {
	f.closeRun()
	if e.Content == &f.dec.block {
		f.log.addOwn(&e)
	} else {
		f.log.add(&e)
	}
	f.give()
}

func (f *folder) closeRun() {
	if !f.inRun {
		return
	}
	// The entry's Content was decoded for it alone: set in place.
	b := f.log.entry(f.log.n - 1).Content
	if f.dec.wire {
		b.TextJSON, b.TextLen = f.run.String(), f.runLen
	} else {
		b.Text = f.run.String()
	}
	f.run.Reset()
	f.inRun = false
}

func (f *folder) toolCall(ev Event) {
	id := ev.ToolCall.ID
	f.log.ToolIDs = append(f.log.ToolIDs, id)
	f.add(Entry{Event: ev, Final: &ToolCall{ID: id, Status: ev.ToolCall.Status}})
	f.finals[id] = f.log.n - 1
}

func (f *folder) toolUpdate(upd *ToolCall) {
	if i, ok := f.finals[upd.ID]; ok {
		mergeToolCall(f.log.entry(i).Final, upd)
		f.give()
	}
}

func (f *folder) finish() *Log {
	f.closeRun()
	l := f.log
	// A tool call that never finished was interrupted (the process died),
	// unless the turn still runs (running: it is being followed live).
	for _, i := range f.finals {
		if f.running {
			break
		}
		e := l.entry(i)
		if s := e.Final.Status; s != ToolCompleted && s != ToolFailed {
			e.Interrupted = true
		}
	}
	f.cutAnswer()
	f.giveRest()
	l.History = repairHistory(l.History)
	return l
}

// cutAnswer puts the answer text streamed since the model context was
// last recorded into the context, as an answer cut short: the process
// died, or a commit failed (a full disk) and the turn stopped, before the
// answer was recorded. The model then holds what the user was shown.
func (f *folder) cutAnswer() {
	l := f.log
	if f.unsaved.Len() > 0 && len(l.History) > 0 && l.History[len(l.History)-1].Role == llm.RoleUser {
		text := f.unsaved.String()
		if f.dec.wire {
			text = unescapeJSON(text)
		}
		l.History = append(l.History, llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
			llm.Text(text + "\n\n[This answer was interrupted: corvid stopped before it finished.]")}})
	}
	f.unsaved.Reset()
}

// addTokens adds a response's usage (nil: none reported) to a sum.
func addTokens(sum *llm.Usage, u *llm.Usage) {
	if u == nil {
		return
	}
	sum.InputTokens += u.InputTokens
	sum.OutputTokens += u.OutputTokens
	sum.CacheReadTokens += u.CacheReadTokens
	sum.CacheWriteTokens += u.CacheWriteTokens
}

// mergeToolCall applies a tool call update to a state.
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
	if upd.AnsweredBy != nil {
		dst.AnsweredBy = upd.AnsweredBy
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

// Summary is what a list of sessions shows of one: read from its log
// without building the transcript or the model context.
type Summary struct {
	Turns     int
	Tokens    llm.Usage
	CostUSD   *float64 // the session's total, when the model's prices are known
	LastError string   // as Log.LastError
}

// Summarize reads a session's summary from the store. Only prompts, usage
// readings and turn errors are decoded.
func Summarize(ctx context.Context, st *store.Store, sessionID string) (Summary, error) {
	var sum Summary
	lastUser := ""
	err := st.ScanEvents(ctx, sessionID, func(r store.Event) error {
		var ev Event
		switch r.Kind {
		case recordTurnError:
			var te turnErrorRecord
			if json.Unmarshal(r.Payload, &te) == nil {
				sum.LastError = te.Message
			}
		case string(EventUsage):
			if json.Unmarshal(r.Payload, &ev) == nil && ev.Usage != nil {
				addTokens(&sum.Tokens, ev.Usage.Tokens)
				if ev.Usage.CostUSD != nil {
					sum.CostUSD = ev.Usage.CostUSD
				}
			}
		case string(EventUserChunk):
			if json.Unmarshal(r.Payload, &ev) == nil && ev.MessageID != lastUser {
				lastUser = ev.MessageID
				sum.Turns++
				sum.LastError = ""
			}
		}
		return nil
	})
	return sum, err
}
