package store

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Live across daemons (docs/store.md, "Live across machines"). Every
// commit of a session's rows on PostgreSQL sends, in its transaction,
//
//	NOTIFY corvid_events, 'ORIGIN SEQ SESSION'
//
// (ORIGIN: the committing Store's lease holder id; SEQ: the last seq the
// commit wrote). PostgreSQL delivers it when, and only if, the commit
// succeeds. A Store that watches a session (Watch) listens on one
// connection of its own and, for a notification of another Store's rows,
// calls the watcher, which reads the new rows itself (EventsAfter): the
// notification carries no content, so a lost or forged one changes
// nothing a reader shows. Once that connection listens (the first time
// too), and each pollEvery while it is lost, every watcher is called
// with seq 0 (catch up from what you saw): a commit made before a watch's
// LISTEN took effect is read then. Polling is only the fallback.

// notifyChannel is the channel corvid's commits notify; questionChannel
// the one its shared questions notify (postgres_questions.go), with the
// same payload (SEQ is 1 there).
const (
	notifyChannel   = "corvid_events"
	questionChannel = "corvid_questions"
)

// watchKey is what a watch of sid on channel ch is filed under.
func watchKey(ch, sid string) string { return ch + "\x00" + sid }

// pgQueryNotify queues the commit's notification (sent at COMMIT).
const pgQueryNotify = `SELECT pg_notify('corvid_events', ?)`

// pollEvery is how often watchers catch up while the listening
// connection is down.
var pollEvery = time.Second

// notifyPayload is the notification of a commit of sid's rows through seq.
func (s *Store) notifyPayload(sid string, seq int64) string {
	return s.lease.holder + " " + strconv.FormatInt(seq, 10) + " " + sid
}

// parseNotify reads a payload notifyPayload wrote. Anything else (a
// payload of another program, or forged by a role that may NOTIFY) is
// rejected: ok false.
func parseNotify(p string) (origin string, seq int64, sid string, ok bool) {
	origin, rest, ok1 := strings.Cut(p, " ")
	num, sid, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || origin == "" || sid == "" || len(sid) > 200 || strings.ContainsAny(sid, " \n\x00") {
		return "", 0, "", false
	}
	seq, err := strconv.ParseInt(num, 10, 64)
	if err != nil || seq <= 0 {
		return "", 0, "", false
	}
	return origin, seq, sid, true
}

// watchers are a Store's session watchers and its listening connection.
type watchers struct {
	mu      sync.Mutex
	subs    map[string]map[*watch]struct{}
	started bool
	stop    chan struct{}
	done    chan struct{}
	// Counters, for tests and logs: notifications dispatched, and
	// notifications ignored as malformed.
	seen, malformed atomic.Int64
	// up: the listening connection is listening now.
	up atomic.Bool
	// self is this Store's origin (its lease holder id): its own
	// notifications are not dispatched.
	self string
}

// watch is one Watch: fn runs on the watch's own goroutine, one call at
// a time; kicks that come while it runs are merged into one more call.
type watch struct {
	fn   func(seq int64)
	kick chan struct{}
	seq  atomic.Int64 // the highest seq notified since the last call; 0: catch up
	quit chan struct{}
}

// Watch calls fn when another Store (another process or machine) commits
// rows of session sid: fn(seq) with the commit's last seq, or fn(0) when
// commits may have been missed (the listening connection was down), so
// the caller reads what it has not seen. Calls are serial; several
// notifications that come while fn runs make one call (with the highest
// seq). The rows of this Store's own commits do not call fn. On SQLite it
// does nothing. stop ends the watch; fn is not called after it returns.
func (s *Store) Watch(sid string, fn func(seq int64)) (stop func()) {
	return s.watchOn(notifyChannel, sid, fn)
}

// watchOn is Watch on channel ch.
func (s *Store) watchOn(ch, sid string, fn func(seq int64)) (stop func()) {
	if !s.pg {
		return func() {}
	}
	sid = watchKey(ch, sid)
	w := &watch{fn: fn, kick: make(chan struct{}, 1), quit: make(chan struct{})}
	ws := &s.watch
	ws.mu.Lock()
	if ws.subs == nil {
		ws.subs = map[string]map[*watch]struct{}{}
	}
	if ws.subs[sid] == nil {
		ws.subs[sid] = map[*watch]struct{}{}
	}
	ws.subs[sid][w] = struct{}{}
	if !ws.started {
		ws.started, ws.self = true, s.lease.holder
		ws.stop, ws.done = make(chan struct{}), make(chan struct{})
		go s.listen()
	}
	ws.mu.Unlock()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-w.quit:
				return
			case <-w.kick:
				w.fn(w.seq.Swap(0))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			ws.mu.Lock()
			delete(ws.subs[sid], w)
			if len(ws.subs[sid]) == 0 {
				delete(ws.subs, sid)
			}
			ws.mu.Unlock()
			close(w.quit)
			<-finished
		})
	}
}

// Listening reports whether the Store's listening connection is up (a
// watch started it).
func (s *Store) Listening() bool { return s.watch.up.Load() }

// MalformedNotifications counts the notifications on corvid's channel
// that were not corvid's and were ignored.
func (s *Store) MalformedNotifications() int64 { return s.watch.malformed.Load() }

// poke asks w to run with seq (0: catch up).
func (w *watch) poke(seq int64) {
	for {
		cur := w.seq.Load()
		if cur == 0 && seq != 0 && len(w.kick) > 0 {
			break // a catch-up is pending: it reads everything anyway
		}
		next := max(cur, seq)
		if seq == 0 {
			next = 0
		}
		if w.seq.CompareAndSwap(cur, next) {
			break
		}
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// dispatch pokes the watchers of sid (every session's, sid "").
func (ws *watchers) dispatch(sid string, seq int64) {
	ws.mu.Lock()
	var targets []*watch
	if sid == "" {
		for _, m := range ws.subs {
			for w := range m {
				targets = append(targets, w)
			}
		}
	} else {
		for w := range ws.subs[sid] {
			targets = append(targets, w)
		}
	}
	ws.mu.Unlock()
	for _, w := range targets {
		w.poke(seq)
	}
}

// listen keeps a connection listening (listenOnce, postgres_listen.go)
// until Close, and dispatches what it hears; while it cannot, it polls.
func (s *Store) listen() {
	ws := &s.watch
	defer close(ws.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-ws.stop
		cancel()
	}()
	for {
		_ = s.listenOnce(ctx, func() { // its error: the connection is gone, whatever it was
			ws.up.Store(true)
			// What was committed while nobody listened: after a lost
			// connection, and before the first one listened too (a watch
			// that began then missed those commits). A watcher's catch-up
			// reads only rows it has not shown, and never this Store's
			// own (OwnThrough): it shows nothing twice.
			ws.dispatch("", 0)
		}, ws.heard)
		ws.up.Store(false)
		if ctx.Err() != nil {
			return
		}
		// Down: catch up now and every pollEvery until a connection
		// listens again.
		ws.dispatch("", 0)
		t := time.NewTimer(pollEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// heard dispatches one notification the listening connection received
// (every channel's: only corvid's two count).
func (ws *watchers) heard(channel, payload string) {
	if channel != notifyChannel && channel != questionChannel {
		return
	}
	origin, seq, sid, ok := parseNotify(payload)
	if !ok {
		ws.malformed.Add(1)
		return
	}
	if origin == ws.self {
		return // this Store's own rows: its sessions showed them
	}
	ws.seen.Add(1)
	ws.dispatch(watchKey(channel, sid), seq)
}

// stopWatch ends the listening connection (Close).
func (s *Store) stopWatch() {
	ws := &s.watch
	ws.mu.Lock()
	started := ws.started
	ws.mu.Unlock()
	if started {
		close(ws.stop)
		<-ws.done
	}
}

// Notifies reports whether the Store tells its watchers of other Stores'
// commits (PostgreSQL).
func (s *Store) Notifies() bool { return s.pg }
