package store

// A commit puts a session's rows after its last seq, which SQLite finds
// by a descent of the events b-tree. events is a WITHOUT ROWID table: its
// rows hold their payload, and SQLite compares a key with a cell by
// reading the cell's whole record, so each step of the descent past a
// long row (a streamed answer's 64 KiB of text) reads it through its
// overflow pages. The writer knows the seq it committed last of each
// session; that is still the session's last when no other connection
// committed since, which PRAGMA data_version tells: its value changes on a
// connection when another connection commits, never for the
// connection's own commits. Other writes of this Store go through the same
// connection and never move a session's last seq (a deleted session's
// pk is never reused, and a fork writes a new session), but for Copy's
// rows, before which the writer forgets what it knew (copy.go).

// lastSeqs is what the writer knows (guarded by commitMu).
type lastSeqs struct {
	known   bool            // version holds
	version int64           // data_version in the writer's last commit
	seq     map[int64]int64 // session pk → the last seq the writer committed
}

// txSeqs is one commit's part: thrown away unless the commit succeeds.
type txSeqs struct {
	read    bool    // version was read in this transaction
	version int64   // data_version in this transaction
	valid   bool    // no other connection committed since the writer's last commit
	last    []pkSeq // each session's last seq it wrote
}

// touch bumps session sid's updated_at and returns its pk and last seq.
// data_version is a statement of its own, prepared once: read in the
// statement that bumps the session (pragma_data_version), SQLite prepared
// a PRAGMA statement at every commit.
func (t *commitTx) touch(sid string, at int64) (pk, seq int64, err error) {
	ts, known := &t.seqs, &t.w.seqs
	if err := t.rc.queryRow(queryTouchSession, []any{at, sid}, &pk); err != nil {
		return 0, 0, err
	}
	if !ts.read {
		var version int64
		if err := t.rc.queryRow(`PRAGMA data_version`, nil, &version); err != nil {
			return 0, 0, err
		}
		ts.read, ts.version = true, version
		ts.valid = known.known && known.version == version
	}
	if s, ok := known.seq[pk]; ok && ts.valid {
		return pk, s, nil
	}
	err = t.rc.queryRow(queryMaxSeq, []any{pk}, &seq)
	return pk, seq, err
}

type pkSeq struct{ pk, seq int64 }

// wrote notes that the commit leaves session pk's last seq at seq (once
// per session: a commit inserts each session's rows in one go).
func (ts *txSeqs) wrote(pk, seq int64) {
	ts.last = append(ts.last, pkSeq{pk, seq})
}

// keep takes in a committed transaction's seqs.
func (ls *lastSeqs) keep(ts *txSeqs) {
	if !ts.read {
		return // PostgreSQL, or no session's row went in
	}
	if !ts.valid || ls.seq == nil || len(ls.seq)+len(ts.last) > maxBases {
		ls.seq = map[int64]int64{} // another connection's commits: what the writer knew may be stale
	}
	for _, x := range ts.last {
		ls.seq[x.pk] = x.seq
	}
	ls.known, ls.version = true, ts.version
}

// forget drops what the writer knew. The caller holds commitMu.
func (ls *lastSeqs) forget() {
	ls.known, ls.seq = false, nil
}
