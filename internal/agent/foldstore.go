package agent

import (
	"context"

	"github.com/corvid-agent/corvid/internal/store"
)

// FoldStored folds a session's stored rows as the store reads them, like
// [Fold] but without holding every row: memory follows the folded log
// (merged messages, final tool states), not the number of rows.
func FoldStored(ctx context.Context, st *store.Store, sessionID string) (*Log, error) {
	return foldScan(ctx, st, sessionID, newFolder())
}

// FoldStream folds a session's stored rows as FoldStored does and gives
// the replay (Log.Replayed's events) to emit as the rows are read: an entry
// goes out once nothing later can change it (the next entry has begun and,
// for a tool call, its state is final), and is then dropped. What the fold
// holds meanwhile is the message being read and the entries from the
// oldest unfinished tool call on; the Log returned has no entries. Text
// chunks come in wire form (Block.TextJSON), copied from the rows.
//
// A message's text longer than maxText bytes (0: no limit) is given in
// the pieces a cut of the whole text into pieces of at most maxText bytes
// on rune boundaries makes, each as a chunk event of the message; while
// the message is the next entry to go out, its pieces go out as it is
// read, so the fold holds at most about maxText bytes plus a row of it.
//
// An event given to emit, and its Content, are only valid until emit
// returns: the fold reuses their memory.
//
// A tool call's final state is the one it has when it goes out: an update
// stored after the call completed or failed (corvid writes none) is not
// replayed.
func FoldStream(ctx context.Context, st *store.Store, sessionID string, maxText int, emit func(Event)) (*Log, error) {
	return foldStream(ctx, st, sessionID, maxText, emit, false)
}

// foldStream is FoldStream; running says a turn of the session runs now,
// so its tool calls without a final state are running, not interrupted.
func foldStream(ctx context.Context, st *store.Store, sessionID string, maxText int, emit func(Event), running bool) (*Log, error) {
	f := newFolder()
	f.dec.wire, f.emit, f.maxText, f.running = true, emit, maxText, running
	lg, err := foldScan(ctx, st, sessionID, f)
	if lg != nil {
		lg.entries, lg.n, lg.first, lg.spare = nil, 0, 0, nil
	}
	return lg, err
}

func newFolder() *folder { return &folder{log: &Log{}, finals: map[string]int{}} }

func foldScan(ctx context.Context, st *store.Store, sessionID string, f *folder) (*Log, error) {
	err := st.ScanEvents(ctx, sessionID, func(r store.Event) error {
		f.row(&r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f.finish(), nil
}

// give hands the settled entries to emit: every entry before the last
// (which may still grow) up to the first tool call whose state is not
// final.
func (f *folder) give() {
	if f.emit == nil {
		return
	}
	for f.sent < f.log.n-1 {
		e := f.log.entry(f.sent)
		if e.Final != nil && e.Final.Status != ToolCompleted && e.Final.Status != ToolFailed {
			return
		}
		f.send(e)
	}
}

// giveRest hands every entry left, and the usage reading, to emit.
func (f *folder) giveRest() {
	if f.emit == nil {
		return
	}
	for f.sent < f.log.n {
		f.send(f.log.entry(f.sent))
	}
	if f.log.Usage != nil {
		f.emit(Event{Kind: EventUsage, Usage: f.log.Usage})
	}
}

// send gives entry e, the next one, to emit and drops it: its block once
// every entry of the block is out.
func (f *folder) send(e *Entry) {
	if e.Final != nil && f.finals[e.Final.ID] == f.sent {
		delete(f.finals, e.Final.ID)
	}
	replayEntry(e, func(ev Event) bool { f.emitCut(ev); return true })
	*e = Entry{}
	f.sent++
	if f.sent%entryBlock == 0 {
		// Every entry of the block was cleared as it went out.
		f.log.spare = f.log.entries[0][:0]
		f.log.entries[0] = nil
		f.log.entries = f.log.entries[1:]
		f.log.first++
	}
}

// emitCut gives ev to emit, a text chunk of more than maxText bytes in
// pieces.
func (f *folder) emitCut(ev Event) {
	b := ev.Content
	if f.maxText <= 0 || b == nil || b.TextLen <= f.maxText || b.TextJSON == "" {
		f.emit(ev)
		return
	}
	rest, n := b.TextJSON, b.TextLen
	for n > f.maxText {
		head, hn := CutWire(rest, f.maxText)
		if head == "" {
			break // maxText below one character's length
		}
		p := *b
		p.TextJSON, p.TextLen = head, hn
		ev.Content = &p
		f.emit(ev)
		rest, n = rest[len(head):], n-hn
	}
	p := *b
	p.TextJSON, p.TextLen = rest, n
	ev.Content = &p
	f.emit(ev)
}

// givePieces gives the start of the message being read (the run) in
// pieces of at most maxText bytes while more than maxText bytes of it are
// held and nothing before it waits.
func (f *folder) givePieces() {
	if f.emit == nil || f.maxText <= 0 || f.runLen <= f.maxText || f.sent != f.log.n-1 {
		return
	}
	e := f.log.entry(f.sent)
	rest := f.run.String()
	for f.runLen > f.maxText {
		head, n := CutWire(rest, f.maxText)
		if head == "" {
			return // maxText below one character's length
		}
		ev := e.Event
		ev.Content = &Block{Type: BlockText, TextJSON: head, TextLen: n}
		f.emit(ev)
		rest, f.runLen = rest[len(head):], f.runLen-n
	}
	f.run.Reset()
	f.run.WriteString(rest)
}
