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
// A tool call's final state is the one it has when it goes out: an update
// stored after the call completed or failed (corvid writes none) is not
// replayed.
func FoldStream(ctx context.Context, st *store.Store, sessionID string, emit func(Event)) (*Log, error) {
	f := newFolder()
	f.dec.wire, f.emit = true, emit
	lg, err := foldScan(ctx, st, sessionID, f)
	if lg != nil {
		lg.entries, lg.n, lg.first = nil, 0, 0
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
	replayEntry(e, func(ev Event) bool { f.emit(ev); return true })
	*e = Entry{}
	f.sent++
	if f.sent%entryBlock == 0 {
		f.log.entries[0] = nil
		f.log.entries = f.log.entries[1:]
		f.log.first++
	}
}
