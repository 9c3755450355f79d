package store

import "sync"

// ownSeqs are, per session, the highest seq this Store committed (or is
// committing) on PostgreSQL: a follower (internal/agent, follow.go) never
// shows as another process's a row this process wrote and showed itself.
//
// A commit's seqs are reserved before its COMMIT runs, so no other
// connection can read one of this Store's rows before OwnThrough covers
// it; a commit that fails gives its reservation back (the seqs were not
// written, and another process may write them next).
type ownSeqs struct {
	mu        sync.Mutex
	committed map[string]int64
	pending   map[string]int64 // reserved by the commit under way
}

// reserve notes that the commit under way writes sid's rows through seq.
func (o *ownSeqs) reserve(sid string, seq int64) {
	o.mu.Lock()
	if o.pending == nil {
		o.pending = map[string]int64{}
	}
	o.pending[sid] = seq
	o.mu.Unlock()
}

// settle ends the commit under way: its reservations become this Store's
// rows if it committed, and are given back if not. Entries are never
// dropped (one int per session this Store wrote: forgetting one would let
// a catch-up show that session's rows twice).
func (o *ownSeqs) settle(committed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if committed {
		if o.committed == nil {
			o.committed = map[string]int64{}
		}
		for sid, seq := range o.pending {
			o.committed[sid] = max(o.committed[sid], seq)
		}
	}
	clear(o.pending)
}

// OwnThrough returns the highest seq of session sid that this Store
// committed or is committing (0: none known). Rows of sid up to it that
// a reader here has not shown were written by this process, or before
// them (PostgreSQL; 0 on SQLite).
func (s *Store) OwnThrough(sid string) int64 {
	o := &s.own
	o.mu.Lock()
	defer o.mu.Unlock()
	return max(o.committed[sid], o.pending[sid])
}
