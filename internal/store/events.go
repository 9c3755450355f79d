package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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

// insertRows is how many events one multi-row INSERT carries; it amortises
// the per-statement cost of database/sql and the driver.
const insertRows = 32

var insertMany = insertQuery(insertRows)

// insertQuery inserts n events.
func insertQuery(n int) string {
	return `INSERT INTO events (session_pk, seq, kind, payload, time) VALUES (?, ?, ?, ?, ?)` + strings.Repeat(`, (?, ?, ?, ?, ?)`, n-1)
}

const (
	// queryTouchSession bumps a session's updated_at and returns its pk;
	// queryMaxSeq is the session's last seq, when the writer does not
	// know it (lastseq.go).
	queryTouchSession = `UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?
RETURNING pk`
	queryMaxSeq  = `SELECT coalesce(max(seq), 0) FROM events WHERE session_pk = ?`
	queryLastSeq = `SELECT coalesce(max(e.seq), 0) FROM sessions s LEFT JOIN events e ON e.session_pk = s.pk WHERE s.id = ?`
)

// kindHead returns kindHead(kind), computed once per kind.
func (w *writer) kindHead(kind string) []byte {
	h, ok := w.heads[kind]
	if !ok {
		h = kindHead(kind)
		w.heads[kind] = h
	}
	return h
}

// commit writes one batch in one transaction. Events of a session that does
// not exist (never created, or deleted meanwhile) are dropped and reported;
// the rest of the batch is still committed. ctx only bounds the retries
// after SQLITE_BUSY (each attempt runs to its end, or to the busy
// timeout): an error that is ctx's means that nothing was committed.
func (w *writer) commit(ctx context.Context, batch []pendingEvent) error {
	order, bySID, size := groupBySession(batch)
	var t *commitTx
	err := w.s.inRawWriteTx(ctx, func(rc *rawConn) error {
		t = &commitTx{w: w, rc: rc,
			newKinds: map[string]int64{}, newBases: map[int64]deltaBase{},
			buf: make([]byte, 0, size+4*len(batch)), args: make([]any, 0, 5*insertRows)}
		for _, sid := range order {
			if err := t.session(sid, bySID[sid]); err != nil {
				return err
			}
		}
		return nil
	})
	if w.s.pg {
		w.s.own.settle(err == nil)
	}
	if err != nil {
		w.s.failBatch(ctx, order, bySID, err)
		return fmt.Errorf("commit %d events: %w", len(batch), err)
	}
	w.keep(t.newKinds, t.newBases)
	w.seqs.keep(&t.seqs)
	w.s.ckpt.wrote(commitPages(len(order), t.stored))
	w.s.lease.settle(t.claims)
	return errors.Join(t.missing...)
}

// groupBySession splits batch by session, keeping each session's events in
// append order, and sums the sizes of the payloads below rawRowMin (what
// the commit's buffer copies; rowBytes). The usual batch holds one
// session: it is used as it is.
func groupBySession(batch []pendingEvent) (order []string, bySID map[string][]pendingEvent, size int) {
	order = []string{batch[0].sessionID}
	bySID = map[string][]pendingEvent{batch[0].sessionID: batch}
	for i, ev := range batch {
		if len(ev.payload) < rawRowMin {
			size += len(ev.payload)
		}
		if ev.sessionID == batch[0].sessionID && len(order) == 1 {
			continue
		}
		if len(order) == 1 {
			bySID[order[0]] = append([]pendingEvent(nil), batch[:i]...)
		}
		if _, ok := bySID[ev.sessionID]; !ok {
			order = append(order, ev.sessionID)
		}
		bySID[ev.sessionID] = append(bySID[ev.sessionID], ev)
	}
	return order, bySID, size
}

// keep remembers, once a commit succeeded, the kind ids it created and each
// session's last payload (the next delta's base).
func (w *writer) keep(newKinds map[string]int64, newBases map[int64]deltaBase) {
	if len(w.bases)+len(newBases) > maxBases {
		clear(w.bases) // sessions long gone; the next deltas start afresh
	}
	for k, id := range newKinds {
		w.kindIDs[k] = id
	}
	for pk, b := range newBases {
		if b.payload == nil {
			delete(w.bases, pk)
		} else {
			w.bases[pk] = b
		}
	}
}

// commitTx is one commit's transaction and what it learns on the way; it is
// thrown away if the transaction is retried or fails.
type commitTx struct {
	w        *writer
	rc       *rawConn
	missing  []error
	newKinds map[string]int64
	newBases map[int64]deltaBase
	claims   map[*claim]error // claims this commit settled: nil written, else why lost
	seqs     txSeqs           // SQLite: the last seqs it read and wrote (lastseq.go)
	buf      []byte           // the stored bytes of rows that are not their payload (rowBytes)
	stored   int              // the stored bytes of the commit's rows
	args     []any
}

// kindID is the id of kind in event_kinds, created on first use.
func (t *commitTx) kindID(kind string) (int64, error) {
	if id, ok := t.w.kindIDs[kind]; ok {
		return id, nil
	}
	if id, ok := t.newKinds[kind]; ok {
		return id, nil
	}
	var id int64
	err := t.rc.queryRow(`INSERT INTO event_kinds (name) VALUES (?)
ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id`, []any{kind}, &id)
	t.newKinds[kind] = id
	return id, err
}

// session appends evs, the batch's events of session sid, after its last
// stored seq.
func (t *commitTx) session(sid string, evs []pendingEvent) error {
	evs, dropped := t.w.s.keepCommittable(sid, evs)
	if dropped != nil {
		if _, lost := t.w.s.lease.pendingClaim(sid); lost != nil {
			dropped = fmt.Errorf("%w: %w", dropped, lost) // why the first rows were dropped
		}
		t.missing = append(t.missing, dropped)
	}
	if len(evs) == 0 {
		return nil
	}
	var pk, seq int64
	var err error
	if t.w.s.pg {
		pk, seq, err = t.pgTouch(sid, evs[len(evs)-1].time)
	} else {
		pk, seq, err = t.touch(sid, evs[len(evs)-1].time)
	}
	if errors.Is(err, sql.ErrNoRows) {
		t.missing = append(t.missing, fmt.Errorf("append to session %s: %w (%d events dropped)", sid, ErrNotFound, len(evs)))
		t.w.s.markDeleted(sid)
		t.w.s.failed.fail(sid, evs[0].ticket)
		return nil
	}
	if err != nil {
		return err
	}
	if c, lost := t.w.s.lease.pendingClaim(sid); c != nil || lost != nil {
		if lost == nil {
			if lost, err = t.w.s.claimCheck(t.rc, sid, c, seq); err != nil {
				return err
			}
			if t.claims == nil {
				t.claims = map[*claim]error{}
			}
			t.claims[c] = lost
		}
		if lost != nil {
			t.missing = append(t.missing, fmt.Errorf("append to session %s: %w (%d events dropped)", sid, lost, len(evs)))
			t.w.s.failed.fail(sid, evs[0].ticket)
			return nil
		}
	} else if t.w.s.pg {
		// The fence: a lease this Store wrote must still be its own.
		if lost, err := t.fence(sid); err != nil {
			return err
		} else if lost != nil {
			t.missing = append(t.missing, fmt.Errorf("append to session %s: %w (%d events dropped)", sid, lost, len(evs)))
			t.w.s.failed.fail(sid, evs[0].ticket)
			return nil
		}
	}
	// The previous payload is a delta base only if nobody (another
	// process) appended to the session since this writer did.
	var prev []byte
	if b, ok := t.w.bases[pk]; ok && b.seq == seq {
		prev = b.payload
	}
	for len(evs) > 0 {
		n := min(len(evs), insertRows)
		if seq, prev, err = t.insert(pk, seq, prev, evs[:n]); err != nil {
			return err
		}
		evs = evs[n:]
	}
	t.newBases[pk] = deltaBase{seq: seq, payload: prev}
	t.seqs.wrote(pk, seq)
	if t.w.s.pg {
		// Before COMMIT: no reader sees these rows before they are known
		// to be this Store's (own.go).
		t.w.s.own.reserve(sid, seq)
		// Delivered at COMMIT, and only if it commits (postgres_notify.go).
		if _, err := t.rc.exec(pgQueryNotify, t.w.s.notifyPayload(sid, seq)); err != nil {
			return err
		}
	}
	return nil
}

// insert writes evs (up to insertRows rows) with one statement; it
// returns the last seq and the next delta base.
func (t *commitTx) insert(pk, seq int64, prev []byte, evs []pendingEvent) (int64, []byte, error) {
	query := insertMany
	if len(evs) < insertRows {
		query = insertQuery(len(evs))
	}
	t.args = t.args[:0]
	for _, ev := range evs {
		seq++
		id, err := t.kindID(ev.kind)
		if err != nil {
			return 0, nil, err
		}
		form, stored, buf := rowBytes(t.buf, ev.payload, prev, t.w.kindHead(ev.kind))
		t.buf, t.stored = buf, t.stored+len(stored)
		t.args = append(t.args, pk, seq, id<<formBits|int64(form), stored, ev.time)
		prev = ev.payload
		if len(prev) > maxDeltaBase {
			prev = nil
		}
	}
	if _, err := t.rc.exec(query, t.args...); err != nil {
		return 0, nil, err
	}
	return seq, prev, nil
}

// LastSeq returns the seq of a session's last event (0 for none), after
// committing any events this Store still holds for it. Another process
// appending to the session moves it.
func (s *Store) LastSeq(ctx context.Context, sessionID string) (int64, error) {
	if err := s.flushSession(ctx, sessionID); err != nil {
		return 0, fmt.Errorf("last event of session %s: %w", sessionID, err)
	}
	var seq int64
	err := retryBusy(ctx, func() error {
		// On the write connection (a plain read takes no lock): it is
		// open anyway, so a per-turn check opens no extra file handles.
		return s.writeDB.QueryRowContext(ctx, queryLastSeq, sessionID).Scan(&seq)
	})
	if err != nil {
		return 0, fmt.Errorf("last event of session %s: %w", sessionID, err)
	}
	return seq, nil
}

// Events returns every event of a session in order, after committing any
// events this Store still holds in memory for it. An unknown session yields
// [ErrNotFound]. It holds the whole log in memory; [Store.EachEvent] does not.
func (s *Store) Events(ctx context.Context, sessionID string) ([]Event, error) {
	var out []Event
	err := s.EachEvent(ctx, sessionID, func(ev Event) error {
		out = append(out, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EachEvent calls fn with every event of a session in order, after
// committing any events this Store still holds in memory for it, reading
// rows as it goes: memory stays bounded by the largest event, not the
// session. Each Event's Payload is freshly allocated; fn may keep it but
// must not modify it. An error from fn stops the walk and is returned as
// is. An unknown session yields [ErrNotFound]. The walk reads one snapshot:
// events appended meanwhile are not seen.
func (s *Store) EachEvent(ctx context.Context, sessionID string, fn func(Event) error) error {
	return s.walk(ctx, sessionID, true, nil, fn)
}

// ScanEvents is [Store.EachEvent] for a reader that decodes each event
// and keeps nothing of it: the Payload fn gets is only valid until fn
// returns (its bytes are reused for the next events), which spares an
// allocation and a copy per row. Time is not read (zero).
func (s *Store) ScanEvents(ctx context.Context, sessionID string, fn func(Event) error) error {
	return s.walk(ctx, sessionID, false, nil, fn)
}

// walk is EachEvent (fresh payloads) and ScanEvents (reused ones); with
// tail, ScanEventsTail (tail.go).
func (s *Store) walk(ctx context.Context, sessionID string, fresh bool, tail []string, fn func(Event) error) error {
	if err := s.flushSession(ctx, sessionID); err != nil {
		return fmt.Errorf("events of session %s: %w", sessionID, err)
	}
	delivered := false
	var fnErr error
	err := retryBusy(ctx, func() error {
		if delivered {
			// Never replay events fn has seen; a busy error mid-walk
			// (which WAL readers should not meet) is returned instead.
			return nil
		}
		tx, pk, kinds, err := s.beginSessionRead(ctx, sessionID)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var from int64
		if tail != nil {
			if from, err = tailStart(ctx, tx, pk, kinds, tail); err != nil {
				return err
			}
		}
		q := `SELECT seq, kind, payload, time FROM events WHERE session_pk = ? AND seq >= ? ORDER BY seq`
		if !fresh {
			q = `SELECT seq, kind, payload FROM events WHERE session_pk = ? AND seq >= ? ORDER BY seq` // each column costs
		}
		rows, err := tx.QueryContext(ctx, q, pk, from)
		if err != nil {
			return err
		}
		defer rows.Close()
		var (
			prev    []byte // the previous event's payload, the base of a delta
			spare   []byte // without fresh: the buffer the next payload is decoded into
			prevSeq int64
			stored  sql.RawBytes
			code, t int64
			seq     int64
		)
		dest := []any{&seq, &code, &stored, &t}
		if !fresh {
			dest = dest[:3]
		}
		for rows.Next() {
			var ev Event
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			ev.Seq = seq
			k, ok := kinds[code>>formBits]
			form := int(code & (1<<formBits - 1))
			if form == formDelta && ev.Seq != prevSeq+1 {
				ok = false
			}
			if ok {
				buf := spare[:0]
				if fresh {
					buf = make([]byte, 0, 64)
				}
				ev.Payload, err = decodeRow(buf, form, stored, prev, k.head)
			}
			if !ok || err != nil {
				return fmt.Errorf("event %d: %w", ev.Seq, errBadRow)
			}
			ev.Kind = k.name
			if fresh {
				ev.Time = time.Unix(0, t)
				prev = append(prev[:0], ev.Payload...)
			} else {
				// The payload is the next row's base; the old base's
				// buffer takes the next row.
				prev, spare = ev.Payload, prev
			}
			prevSeq = ev.Seq
			delivered = true
			if fnErr = fn(ev); fnErr != nil {
				return nil
			}
		}
		return rows.Err()
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("events of session %s: %w", sessionID, err)
	}
	return nil
}

type kindName struct {
	name string
	head []byte // kindHead(name)
}

// beginSessionRead opens a read transaction on one snapshot and finds the
// session's pk and the event kinds in it; the caller rolls tx back.
func (s *Store) beginSessionRead(ctx context.Context, sessionID string) (tx *sql.Tx, pk int64, kinds map[int64]kindName, err error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.pg {
		// One snapshot for the kinds and the rows, as SQLite's read
		// transaction is (READ COMMITTED, PostgreSQL's default, takes one
		// per statement: a kind committed between the two would be
		// missing).
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err = s.readDB.BeginTx(ctx, opts)
	if err != nil {
		return nil, 0, nil, err
	}
	err = tx.QueryRowContext(ctx, `SELECT pk FROM sessions WHERE id = ?`, sessionID).Scan(&pk)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err == nil {
		kinds, err = readKinds(ctx, tx)
	}
	if err != nil {
		_ = tx.Rollback()
		return nil, 0, nil, err
	}
	return tx, pk, kinds, nil
}

// readKinds loads the event_kinds table (a few dozen rows at most).
func readKinds(ctx context.Context, tx *sql.Tx) (map[int64]kindName, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, name FROM event_kinds`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[int64]kindName{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		m[id] = kindName{name, kindHead(name)}
	}
	return m, rows.Err()
}
