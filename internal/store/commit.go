package store

// Group commit's transaction: how the writer puts a batch of appended
// events into the events table (the queue and its goroutine are in
// events.go).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

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
