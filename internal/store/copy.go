package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
)

// CopyReport is what [Copy] did and found.
type CopyReport struct {
	Sessions       int   // sessions in the source
	NewSessions    int   // created in the destination by this run
	Events         int64 // events in the source
	CopiedEvents   int64 // written to the destination by this run
	Mismatched     []string
	SourceHash     string // over every session's id, metadata and events, in id order
	DestHash       string // the same over the destination's copies
	DestExtraEvent bool   // a destination session has events the source lacks
}

// copyBatch is how many events one transaction of Copy writes: an
// interrupted copy loses at most one batch's work, never its order.
const copyBatch = 1000

// Copy copies every session of src, and every event of it, into dst,
// keeping ids, metadata, sequence numbers and times. It can run again
// without harm: a session dst has is not created again, and only the
// events after dst's last seq of it are copied, so an interrupted run
// resumes where it stopped (events go in transactions of copyBatch, in
// order). Afterwards it compares, session by session, the event counts
// and a SHA-256 of the events (seq, kind, time, payload) of both stores;
// the report lists the sessions that differ. Nothing else should write
// the copied sessions in dst meanwhile. progress, if not nil, is called
// after each session.
func Copy(ctx context.Context, src, dst *Store, progress func(id string, copied int64)) (CopyReport, error) {
	var rep CopyReport
	var ids []string
	cursor := ""
	for {
		page, next, err := src.List(ctx, ListOptions{Cursor: cursor, Limit: MaxListLimit})
		if err != nil {
			return rep, err
		}
		for _, s := range page {
			ids = append(ids, s.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	rep.Sessions = len(ids)
	for _, id := range ids {
		n, created, err := copySession(ctx, src, dst, id)
		if err != nil {
			return rep, fmt.Errorf("copy session %s: %w", id, err)
		}
		rep.CopiedEvents += n
		if created {
			rep.NewSessions++
		}
		if progress != nil {
			progress(id, n)
		}
	}
	// Verify.
	srcAll, dstAll := sha256.New(), sha256.New()
	for _, id := range ids {
		sn, sh, err := sessionDigest(ctx, src, id, srcAll)
		if err != nil {
			return rep, fmt.Errorf("verify session %s in the source: %w", id, err)
		}
		dn, dh, err := sessionDigest(ctx, dst, id, dstAll)
		if err != nil {
			return rep, fmt.Errorf("verify session %s in the destination: %w", id, err)
		}
		rep.Events += sn
		if sn != dn || sh != dh {
			rep.Mismatched = append(rep.Mismatched, id)
			if dn > sn {
				rep.DestExtraEvent = true
			}
		}
	}
	rep.SourceHash = fmt.Sprintf("%x", srcAll.Sum(nil))
	rep.DestHash = fmt.Sprintf("%x", dstAll.Sum(nil))
	return rep, nil
}

// sessionDigest hashes a session's metadata and events into all and
// returns its event count and its own hash.
func sessionDigest(ctx context.Context, s *Store, id string, all hash.Hash) (int64, string, error) {
	meta, err := s.GetSession(ctx, id)
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	var num [8]byte
	put := func(b []byte) {
		binary.BigEndian.PutUint64(num[:], uint64(len(b)))
		h.Write(num[:])
		h.Write(b)
	}
	putInt := func(n int64) {
		binary.BigEndian.PutUint64(num[:], uint64(n))
		h.Write(num[:])
	}
	put([]byte(meta.ID))
	put([]byte(meta.Cwd))
	put([]byte(meta.Title))
	put([]byte(meta.Model))
	put([]byte(meta.Mode))
	put(meta.Config)
	put([]byte(meta.ParentID))
	for _, d := range meta.AdditionalDirs {
		put([]byte(d))
	}
	putInt(meta.CreatedAt.UnixNano())
	putInt(meta.UpdatedAt.UnixNano())
	var n int64
	err = s.EachEvent(ctx, id, func(ev Event) error {
		n++
		putInt(ev.Seq)
		put([]byte(ev.Kind))
		putInt(ev.Time.UnixNano())
		put(ev.Payload)
		return nil
	})
	if err != nil {
		return 0, "", err
	}
	sum := h.Sum(nil)
	all.Write(sum)
	return n, fmt.Sprintf("%x", sum), nil
}

// copySession copies one session's metadata (when dst lacks it) and its
// events after dst's last seq.
func copySession(ctx context.Context, src, dst *Store, id string) (copied int64, created bool, err error) {
	meta, err := src.GetSession(ctx, id)
	if err != nil {
		return 0, false, err
	}
	if _, err := dst.GetSession(ctx, id); errors.Is(err, ErrNotFound) {
		if err := dst.CreateSession(ctx, meta); err != nil && !errors.Is(err, ErrExists) {
			return 0, false, err
		}
		created = true
	} else if err != nil {
		return 0, false, err
	}
	have, err := dst.LastSeq(ctx, id)
	if err != nil {
		return 0, created, err
	}
	var batch []Event
	var prev []byte // the payload before batch[0]: its delta base
	var batchPrev []byte
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := dst.insertEvents(ctx, id, batchPrev, batch); err != nil {
			return err
		}
		copied += int64(len(batch))
		batch = batch[:0]
		return nil
	}
	err = src.EachEvent(ctx, id, func(ev Event) error {
		if ev.Seq > have {
			if len(batch) == 0 {
				batchPrev = prev
				if len(batchPrev) > maxDeltaBase {
					batchPrev = nil
				}
			}
			batch = append(batch, ev)
			if len(batch) == copyBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		prev = ev.Payload
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return copied, created, err
	}
	// The source's updated_at, not the copy's time.
	err = dst.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE id = ?`, meta.UpdatedAt.UnixNano(), id)
		return err
	})
	return copied, created, err
}

// insertEvents writes evs, whose seqs follow the session's last, in one
// transaction, as the writer encodes rows (prev is the payload before
// evs[0]). It checks in the transaction that the session's last seq is
// still the one before evs[0]: a concurrent writer makes it fail.
func (s *Store) insertEvents(ctx context.Context, id string, prev []byte, evs []Event) error {
	// These rows go in on the write connection, whose own commits
	// data_version does not count: the writer, which may know a last seq
	// of id, forgets what it knows (lastseq.go). With commitMu held, no
	// commit of the writer runs in between.
	s.w.commitMu.Lock()
	defer s.w.commitMu.Unlock()
	s.w.seqs.forget()
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var pk, last int64
		if err := tx.QueryRowContext(ctx, `SELECT pk FROM sessions WHERE id = ?`+s.forUpdate(), id).Scan(&pk); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM events WHERE session_pk = ?`, pk).Scan(&last); err != nil {
			return err
		}
		if last != evs[0].Seq-1 {
			return fmt.Errorf("destination session has %d events, expected %d: something else writes it", last, evs[0].Seq-1)
		}
		kinds := map[string]int64{}
		var buf []byte
		args := make([]any, 0, 5*insertRows)
		for len(evs) > 0 {
			n := min(len(evs), insertRows)
			args = args[:0]
			buf = buf[:0]
			for _, ev := range evs[:n] {
				kid, ok := kinds[ev.Kind]
				if !ok {
					if err := tx.QueryRowContext(ctx, `INSERT INTO event_kinds (name) VALUES (?)
ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id`, ev.Kind).Scan(&kid); err != nil {
						return err
					}
					kinds[ev.Kind] = kid
				}
				start := len(buf)
				var form int
				form, buf = encodeRow(buf, ev.Payload, prev, kindHead(ev.Kind))
				args = append(args, pk, ev.Seq, kid<<formBits|int64(form), buf[start:len(buf):len(buf)], ev.Time.UnixNano())
				prev = ev.Payload
				if len(prev) > maxDeltaBase {
					prev = nil
				}
			}
			if _, err := tx.ExecContext(ctx, insertQuery(n), args...); err != nil {
				return err
			}
			evs = evs[n:]
		}
		return nil
	})
}
