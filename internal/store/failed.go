package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// failedRows are, per session, the appended events whose commit failed
// and the events after them: once a commit of a session's rows fails (a
// full disk), the session's later rows are dropped too, until its writer
// calls [Store.ClearFailure]. So what the store holds of a session is
// always a prefix of what was appended, never a log with a hole in it,
// and a writer that shows only rows whose commit succeeded
// ([Store.CommitFailed]) shows exactly what the store holds (issue 29:
// after a disk-full cut, a reload showed 174 KB the client never got).
type failedRows struct {
	some atomic.Bool // a failure was ever recorded: else failed is false without a lock
	mu   sync.Mutex
	from map[string]uint64 // session → first failed ticket, while it fails
	// spans are the failed tickets of sessions cleared since, [from, to];
	// below is the newest ticket of spans forgotten (a bound on memory):
	// tickets at or below it count as failed.
	spans map[string][]ticketSpan
	below map[string]uint64
}

type ticketSpan struct{ from, to uint64 }

// maxFailedSpans bounds the spans kept per session.
const maxFailedSpans = 8

// failed reports whether the event of sessionID with ticket failed (or
// is dropped) to be committed.
func (f *failedRows) failed(sessionID string, ticket uint64) bool {
	if !f.some.Load() {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if from, ok := f.from[sessionID]; ok && ticket >= from {
		return true
	}
	if ticket <= f.below[sessionID] {
		return true
	}
	for _, s := range f.spans[sessionID] {
		if s.from <= ticket && ticket <= s.to {
			return true
		}
	}
	return false
}

// fail marks sessionID's events from ticket on as failed.
func (f *failedRows) fail(sessionID string, ticket uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.some.Store(true)
	if f.from == nil {
		f.from = map[string]uint64{}
	}
	if from, ok := f.from[sessionID]; !ok || ticket < from {
		f.from[sessionID] = ticket
	}
}

// clear ends sessionID's failure: its events after ticket last are
// committed again.
func (f *failedRows) clear(sessionID string, last uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	from, ok := f.from[sessionID]
	if !ok {
		return
	}
	delete(f.from, sessionID)
	if f.spans == nil {
		f.spans, f.below = map[string][]ticketSpan{}, map[string]uint64{}
	}
	spans := append(f.spans[sessionID], ticketSpan{from, last})
	if len(spans) > maxFailedSpans {
		f.below[sessionID] = spans[0].to
		spans = spans[1:]
	}
	f.spans[sessionID] = spans
}

// CommitFailed reports whether the event of sessionID appended with ticket
// ([Store.Appended] right after its Append) was not committed because a
// commit failed, or because it came after a failed one (see failedRows).
// Ask it once the ticket is committed ([Store.IsCommitted]).
func (s *Store) CommitFailed(sessionID string, ticket uint64) bool {
	return s.failed.failed(sessionID, ticket)
}

// ClearFailure lets sessionID's events be committed again after a failed
// commit: its writer calls it when it starts afresh from what the store
// holds (the next turn, which reloads the session's memory).
func (s *Store) ClearFailure(sessionID string) {
	w := s.w
	w.mu.Lock()
	last := w.enqueued
	w.mu.Unlock()
	s.failed.clear(sessionID, last)
}

// keepCommittable returns the events of evs (one session's, in order)
// that may be committed, and an error naming the ones dropped because an
// earlier commit of the session failed.
func (s *Store) keepCommittable(sessionID string, evs []pendingEvent) ([]pendingEvent, error) {
	n := 0
	for n < len(evs) && !s.failed.failed(sessionID, evs[n].ticket) {
		n++
	}
	if n == len(evs) {
		return evs, nil
	}
	// Failed tickets of a session are a suffix of what was appended
	// before ClearFailure, so the rest of evs is dropped too.
	return evs[:n], fmt.Errorf("append to session %s: %w (%d events dropped)", sessionID, errAfterFailedCommit, len(evs)-n)
}

var errAfterFailedCommit = errors.New("an earlier commit of the session failed")

// failBatch marks the sessions of a batch that failed to commit (err not
// ctx's: then nothing was tried) as failed from their first event on.
func (s *Store) failBatch(ctx context.Context, order []string, bySID map[string][]pendingEvent, err error) {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return
	}
	for _, sid := range order {
		s.failed.fail(sid, bySID[sid][0].ticket)
	}
}
