package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Event is one stored event of a session. Seq counts from 1 in each session.
type Event struct {
	Seq     int64
	Kind    string
	Payload []byte
	Time    time.Time
}

// Group commit tuning. linger bounds how long an event waits in memory
// before its group is committed; maxBatch bounds one transaction (so another
// process never waits long for the write lock); maxQueue bounds memory when
// the disk cannot keep up, and is (with maxQueueBytes) the only point where
// Append waits.
const (
	linger   = 2 * time.Millisecond
	maxBatch = 2048
	maxQueue = 1 << 16
	maxSpare = 2 * maxBatch // largest queue array kept for reuse
	// maxQueueBytes and maxBatchBytes bound the same by payload size: a
	// long answer's rows are then never all queued and copied into one
	// transaction's buffer at once (issue 29: memory of several times the
	// answer).
	maxQueueBytes = 4 << 20
	maxBatchBytes = 2 << 20
)

// maxBases bounds the sessions whose last payload the writer keeps.
const maxBases = 256

// deltaBase is the payload of a session's event seq, as committed.
type deltaBase struct {
	seq     int64
	payload []byte
}

type pendingEvent struct {
	ticket    uint64 // position in this Store's append order, from 1
	sessionID string
	kind      string
	payload   []byte
	time      int64 // Unix ns
}

// writer owns the queue of appended events and the goroutine that commits it.
type writer struct {
	s *Store

	// commitMu is held through each commit and its bookkeeping
	// (AcquireTurn's claim needs a moment with no commit running).
	commitMu sync.Mutex

	mu        sync.Mutex
	space     *sync.Cond     // signalled when the queue shrinks (backpressure)
	queue     []pendingEvent // FIFO, not yet handed to the committer
	queued    int            // payload bytes in queue
	spare     []pendingEvent // a committed queue's array, for the next queue
	enqueued  uint64         // ticket of the last appended event
	committed uint64         // every ticket ≤ this has been committed (or failed)
	notify    chan struct{}  // closed and replaced after each commit
	lastBySID map[string]uint64
	// Owned by the committing goroutine: kind ids known to be committed,
	// and each session's last committed payload (the next delta's base).
	kindIDs  map[string]int64
	heads    map[string][]byte // kindHead of each kind seen
	bases    map[int64]deltaBase
	seqs     lastSeqs      // SQLite: each session's last seq this writer committed
	failed   error         // first write error not yet reported by Flush
	failures atomic.Uint64 // commits that failed since the Store opened (read without mu)
	raw      rawConn       // the write connection for commits (guarded by commitMu)
	closing  bool

	wake chan struct{} // the queue became non-empty
	kick chan struct{} // commit now: Flush is waiting or a batch is full
	stop chan struct{} // closed by close
	done chan struct{} // closed when run returns
}

func newWriter(s *Store) *writer {
	w := &writer{
		s:         s,
		notify:    make(chan struct{}),
		lastBySID: make(map[string]uint64),
		kindIDs:   make(map[string]int64),
		heads:     make(map[string][]byte),
		bases:     make(map[int64]deltaBase),
		wake:      make(chan struct{}, 1),
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	w.space = sync.NewCond(&w.mu)
	return w
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Append queues one event for sessionID and returns without touching the
// disk; the event is committed within a few milliseconds, and the session's
// updated_at is bumped to the event's time. The payload is copied. Errors
// that happen while committing (for example an unknown session) are reported
// by the next [Store.Flush] or by [Store.Close].
func (s *Store) Append(sessionID, kind string, payload []byte) error {
	return s.AppendOwned(sessionID, kind, append(make([]byte, 0, len(payload)), payload...))
}

// AppendOwned is [Store.Append] for a payload the caller hands over: it
// is queued as it is, not copied, and the caller must not touch it again
// (a freshly encoded row: a copy per row is a copy of every streamed
// byte).
func (s *Store) AppendOwned(sessionID, kind string, payload []byte) error {
	if sessionID == "" || kind == "" {
		return fmt.Errorf("append event: empty session id or kind")
	}
	ev := pendingEvent{
		sessionID: sessionID,
		kind:      kind,
		payload:   payload,
		time:      s.now().UnixNano(),
	}
	w := s.w
	w.mu.Lock()
	for (len(w.queue) >= maxQueue || w.queued >= maxQueueBytes) && !w.closing {
		signal(w.kick)
		w.space.Wait()
	}
	if w.closing {
		w.mu.Unlock()
		return ErrClosed
	}
	w.enqueued++
	ev.ticket = w.enqueued
	w.queue = append(w.queue, ev)
	w.queued += len(ev.payload)
	w.lastBySID[sessionID] = ev.ticket
	n, queued := len(w.queue), w.queued
	w.mu.Unlock()
	if n == 1 {
		signal(w.wake)
	}
	if n >= maxBatch || queued >= maxBatchBytes {
		signal(w.kick)
	}
	return nil
}

// Flush waits until every event appended so far has been committed (and
// what writers hold back, see [Store.Hold]). It
// returns the first commit error since the previous Flush, if any.
func (s *Store) Flush(ctx context.Context) error {
	s.holds.release("")
	return s.w.flush(ctx)
}

// flush waits for every event appended so far and returns the first
// commit error not yet reported.
func (w *writer) flush(ctx context.Context) error {
	w.mu.Lock()
	target := w.enqueued
	w.mu.Unlock()
	if err := w.waitFor(ctx, target, false); err != nil {
		return err
	}
	w.mu.Lock()
	err := w.failed
	w.failed = nil
	w.mu.Unlock()
	return err
}

// Appended returns a ticket for every event appended so far: once
// [Store.AwaitCommit] returns for it, those events are committed.
func (s *Store) Appended() uint64 {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.enqueued
}

// AwaitCommit waits until the events behind ticket (from [Store.Appended])
// have been committed, or failed to be: compare [Store.CommitFailures]
// before and after. It does not ask what writers hold back ([Store.Hold]).
func (s *Store) AwaitCommit(ctx context.Context, ticket uint64) error {
	return s.w.waitFor(ctx, ticket, false)
}

// CommitNow is AwaitCommit for a caller that needs its events committed
// at once (a turn's first shown event): when no commit is running it
// commits them itself, on its own goroutine, instead of waking the
// writer goroutine and being woken by it again, two hand-offs between
// threads (prompt → first chunk, ARCHITECTURE.md §7). If ctx ends while
// another process holds the database's write lock, the events stay
// queued for the writer goroutine and ctx's error is returned.
// (A stream does not use it: its commits stay grouped by the writer.)
func (s *Store) CommitNow(ctx context.Context, ticket uint64) error {
	return s.w.waitFor(ctx, ticket, true)
}

// IsCommitted reports whether the events behind ticket have been committed
// (or failed to be), without waiting.
func (s *Store) IsCommitted(ticket uint64) bool {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.committed >= ticket
}

// Sync waits until every event appended so far has been committed, like
// [Store.Flush] but without asking the holds: a writer that holds an
// event back makes it durable itself when it must ([Store.AwaitCommit]).
// It returns the first commit error since the previous Flush or Sync.
func (s *Store) Sync(ctx context.Context) error {
	return s.w.flush(ctx)
}

// CommitFailures counts the commits that failed since the Store opened
// (each lost its events). Unlike Flush's error, which one caller consumes,
// every caller can compare counts taken before and after its work.
func (s *Store) CommitFailures() uint64 {
	return s.w.failures.Load()
}

// flushSession waits until every event appended so far to sessionID has been
// committed. Commit errors are left for Flush to report.
func (s *Store) flushSession(ctx context.Context, sessionID string) error {
	s.holds.release(sessionID)
	w := s.w
	w.mu.Lock()
	target := w.lastBySID[sessionID]
	w.mu.Unlock()
	return w.waitFor(ctx, target, false)
}

// waitFor waits until the events behind ticket are committed; with now,
// when no commit is running, it commits them itself (see CommitNow).
func (w *writer) waitFor(ctx context.Context, ticket uint64, now bool) error {
	for {
		w.mu.Lock()
		if w.committed >= ticket {
			w.mu.Unlock()
			return nil
		}
		ch := w.notify
		w.mu.Unlock()
		if now && w.commitMu.TryLock() {
			err := w.commitThrough(ctx, ticket)
			w.commitMu.Unlock()
			if err != nil {
				return err
			}
			continue
		}
		signal(w.kick)
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// close stops accepting events, commits the queue and waits for the writer.
func (w *writer) close() error {
	w.mu.Lock()
	w.closing = true
	w.space.Broadcast()
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.failed
	w.failed = nil
	return err
}

// run is the writer goroutine: wait for events, let a group gather for up to
// linger (cut short by Flush, a full batch or Close), commit, repeat.
func (w *writer) run() {
	defer close(w.done)
	stopping := false
	for {
		urgent := stopping
		if !stopping {
			select {
			case <-w.wake:
			case <-w.kick:
				urgent = true
			case <-w.stop:
				stopping, urgent = true, true
			}
		}
		w.mu.Lock()
		n := len(w.queue)
		var first int64
		if n > 0 {
			first = w.queue[0].time
		}
		w.mu.Unlock()
		if n == 0 {
			if stopping {
				return
			}
			continue
		}
		if !urgent && n < maxBatch {
			// first comes from the injected clock; measure age with it too.
			if wait := linger - w.s.now().Sub(time.Unix(0, first)); wait > 0 {
				t := time.NewTimer(min(wait, linger))
				select {
				case <-t.C:
				case <-w.kick:
				case <-w.stop:
					stopping = true
				}
				t.Stop()
			}
		}
		w.drain()
	}
}

// drain commits the queue, maxBatch events per transaction, until it is empty.
func (w *writer) drain() {
	for {
		w.commitMu.Lock()
		more, _ := w.commitBatch(context.Background())
		w.commitMu.Unlock()
		if !more {
			return
		}
	}
}

// commitThrough commits the head of the queue until the events behind
// ticket are committed. It stops early with ctx's error if ctx ends while
// the database is locked by another process; the events not committed
// stay queued for the writer goroutine. The caller holds commitMu.
func (w *writer) commitThrough(ctx context.Context, ticket uint64) error {
	for {
		w.mu.Lock()
		done := w.committed >= ticket
		w.mu.Unlock()
		if done {
			return nil
		}
		more, err := w.commitBatch(ctx)
		if err != nil {
			signal(w.wake)
			return err
		}
		if !more {
			return nil
		}
	}
}

// commitBatch commits the head of the queue (up to maxBatch events) in one
// transaction; false when the queue was empty. The caller holds commitMu,
// so batches commit in queue order whichever goroutine commits them. If
// ctx ends while the commit waits for another process's lock, the batch
// goes back to the head of the queue and ctx's error is returned.
func (w *writer) commitBatch(ctx context.Context) (bool, error) {
	w.mu.Lock()
	n, bytes := 0, 0
	for n < min(len(w.queue), maxBatch) && (n == 0 || bytes < maxBatchBytes) {
		bytes += len(w.queue[n].payload)
		n++
	}
	if n == 0 {
		w.mu.Unlock()
		return false, nil
	}
	batch := w.queue[:n:n]
	w.queued -= bytes
	var recycle []pendingEvent
	if n == len(w.queue) {
		recycle = w.queue[:0]
		w.queue = w.spare
		w.spare = nil
	} else {
		w.queue = w.queue[n:]
	}
	w.space.Broadcast()
	w.mu.Unlock()

	err := w.commit(ctx, batch)

	w.mu.Lock()
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		// Nothing of the batch was committed: queue it again, first.
		w.queue = append(batch[:n:n], w.queue...)
		w.queued += bytes
		w.mu.Unlock()
		return true, err
	}
	last := batch[len(batch)-1].ticket
	w.committed = last
	if err != nil {
		w.failures.Add(1)
		if w.failed == nil {
			w.failed = err
		}
	}
	for _, ev := range batch {
		if t, ok := w.lastBySID[ev.sessionID]; ok && t <= last {
			delete(w.lastBySID, ev.sessionID)
		}
	}
	// Drop the payloads: the queue's array (or the next queue's, when it
	// is kept as spare) would keep them alive until it is replaced.
	clear(batch)
	if recycle != nil && cap(recycle) <= maxSpare {
		w.spare = recycle
	}
	close(w.notify)
	w.notify = make(chan struct{})
	w.mu.Unlock()
	return true, nil
}
