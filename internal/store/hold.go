package store

import "sync"

// holds are the tails of session logs that writers keep in memory to merge
// more into (a streamed answer's text chunks) instead of appending a row
// per piece. Whoever needs a log committed asks for them first: Flush asks
// every hold, a read of one session (Events, EachEvent, LastSeq) that
// session's, Close every one.
type holds struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]hold
}

type hold struct {
	sessionID string
	release   func()
}

// Hold registers release, which appends (with [Store.Append]) whatever the
// caller holds back of sessionID's log; the store calls it before it
// commits or reads that log. release may be called from any goroutine, at
// any time until drop returns, and must not call Flush or read the log.
// Call drop when the caller holds nothing more (a closed session).
func (s *Store) Hold(sessionID string, release func()) (drop func()) {
	h := &s.holds
	h.mu.Lock()
	if h.m == nil {
		h.m = make(map[uint64]hold)
	}
	h.next++
	key := h.next
	h.m[key] = hold{sessionID, release}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.m, key)
		h.mu.Unlock()
	}
}

// release asks the holds of sessionID ("" for every session) to append
// what they keep. The callbacks run outside the lock: they take their own
// locks and call Append.
func (h *holds) release(sessionID string) {
	h.mu.Lock()
	var fns []func()
	for _, x := range h.m {
		if sessionID == "" || x.sessionID == sessionID {
			fns = append(fns, x.release)
		}
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
