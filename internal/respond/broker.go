package respond

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	// maxSocketPath is the shortest sun_path limit among the platforms we
	// build for (104 on darwin and the BSDs, 108 on Linux), less the NUL.
	maxSocketPath = 103
	// connDeadline bounds one request/response exchange.
	connDeadline = 5 * time.Second
	// keepSettled is how many settled questions a broker remembers for
	// late replies.
	keepSettled = 64
	// idAlphabet leaves out 0/o and 1/l/i, which are easy to mistype.
	idAlphabet = "23456789abcdefghjkmnpqrstuvwxyz"
)

// held lists the socket paths served by brokers of this process. A socket
// named after our own pid that is not held here is a leftover of an
// earlier process that had the same pid.
var (
	heldMu sync.Mutex
	held   = map[string]bool{}
)

// Broker holds the questions of one corvid process and serves them on its
// control socket. Its methods are safe for concurrent use.
type Broker struct {
	path   string
	ln     *net.UnixListener
	logger *slog.Logger
	uid    int
	now    func() time.Time

	mu      sync.Mutex
	pending map[string]*waiter
	settled []settledQuestion // oldest first, at most keepSettled
	closed  bool
	ownDir  string // the directory made for this broker alone; removed on Close

	conns sync.WaitGroup
	done  chan struct{} // closed when the accept loop returns
}

type waiter struct {
	q      Question
	result chan outcome // buffered: settling never blocks
}

type outcome struct {
	answer Answer
	err    error
}

type settledQuestion struct {
	id, what string
}

// Listen serves a control socket for the questions of this process, in
// the directory p names (made private, mode 0700, if needed; see Place).
// A nil logger discards.
func Listen(p Place, logger *slog.Logger) (*Broker, error) {
	return listenAs(p, logger, os.Getuid())
}

// listenAs is Listen admitting peers of uid: tests pose as another user.
func listenAs(p Place, logger *slog.Logger, uid int) (*Broker, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dir, ownDir, err := p.brokerDir()
	if err != nil {
		return nil, err
	}
	ln, path, err := listenFree(dir)
	if err != nil {
		if ownDir {
			_ = os.Remove(dir)
		}
		return nil, err
	}
	b := &Broker{
		path:    path,
		ln:      ln,
		logger:  logger,
		uid:     uid,
		now:     time.Now,
		pending: map[string]*waiter{},
		done:    make(chan struct{}),
	}
	if ownDir {
		b.ownDir = dir
	}
	go b.acceptLoop()
	return b, nil
}

// listenFree serves corvid-<pid>, or corvid-<pid>-N when this process
// already serves one there (several brokers, as in tests) or a live
// process of another pid namespace holds the name. The entry (entrySuffix)
// is the socket itself, or on Linux a file naming an abstract socket.
func listenFree(dir string) (*net.UnixListener, string, error) {
	heldMu.Lock()
	defer heldMu.Unlock()
	pid := os.Getpid()
	for n := 1; n <= 100; n++ {
		name := fmt.Sprintf("corvid-%d%s", pid, entrySuffix)
		if n > 1 {
			name = fmt.Sprintf("corvid-%d-%d%s", pid, n, entrySuffix)
		}
		path := filepath.Join(dir, name)
		if held[path] {
			continue
		}
		if _, err := os.Lstat(path); err == nil {
			if answers(path) {
				continue
			}
			// Left by a dead process that had our pid.
			if err := os.Remove(path); err != nil {
				return nil, "", fmt.Errorf("remove stale control socket: %w", err)
			}
		}
		ln, err := bindEntry(path)
		if err != nil {
			return nil, "", err
		}
		held[path] = true
		return ln, path, nil
	}
	return nil, "", fmt.Errorf("no free control socket name in %s", dir)
}

// answers reports whether something accepts connections at path.
func answers(path string) bool {
	c, err := dialEntry(path, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Path is the control socket's entry in its directory: the socket file, or
// on Linux the file that names the abstract socket.
func (b *Broker) Path() string { return b.path }

// Ask registers q and waits until it is answered through the control
// socket. When ctx ends it returns Deny and ctx's cause (wrapping
// ErrAnsweredElsewhere when someone else answered: what corvid respond is
// told of the question then); when timeout (> 0)
// passes first it returns Deny and an error wrapping ErrTimeout; when the
// broker closes, Deny and ErrClosed. An empty q.ID is replaced with a fresh
// one and a zero q.Asked with the current time; the caller who needs the ID
// before Ask returns (to show it) should set it with NewID.
func (b *Broker) Ask(ctx context.Context, q Question, timeout time.Duration) (Answer, error) {
	w, err := b.register(q)
	if err != nil {
		return Deny, err
	}
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case o := <-w.result:
		return o.answer, o.err
	case <-ctx.Done():
		return b.giveUp(w, context.Cause(ctx))
	case <-expired:
		return b.giveUp(w, fmt.Errorf("%w after %s", ErrTimeout, timeout))
	}
}

// NewID returns an id that no pending question of b uses. It does not
// reserve it.
func (b *Broker) NewID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.freeIDLocked()
}

func (b *Broker) freeIDLocked() string {
	for {
		id := []byte{'q', 0, 0, 0}
		for i := 1; i < len(id); i++ {
			id[i] = idAlphabet[rand.N(len(idAlphabet))]
		}
		if b.pending[string(id)] == nil && !b.settledLocked(string(id)) {
			return string(id)
		}
	}
}

func (b *Broker) settledLocked(id string) bool {
	return slices.ContainsFunc(b.settled, func(s settledQuestion) bool { return s.id == id })
}

func (b *Broker) register(q Question) (*waiter, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if q.ID == "" {
		q.ID = b.freeIDLocked()
	} else if b.pending[q.ID] != nil {
		return nil, fmt.Errorf("question %s is already pending", q.ID)
	}
	if q.Asked.IsZero() {
		q.Asked = b.now()
	}
	w := &waiter{q: q, result: make(chan outcome, 1)}
	b.pending[q.ID] = w
	b.logger.Info("permission question waits for corvid respond", "id", q.ID, "session", q.SessionID, "title", q.Title)
	return w, nil
}

// giveUp settles w as Deny because of cause, unless an answer got there
// first, in which case that answer stands: the replier was told it counted.
func (b *Broker) giveUp(w *waiter, cause error) (Answer, error) {
	b.mu.Lock()
	mine := b.pending[w.q.ID] == w
	if mine {
		b.settleLocked(w, outcome{Deny, cause})
	}
	b.mu.Unlock()
	o := <-w.result
	return o.answer, o.err
}

// settleLocked removes w from the pending set, remembers what became of it
// and hands the outcome to its Ask.
func (b *Broker) settleLocked(w *waiter, o outcome) {
	delete(b.pending, w.q.ID)
	what := "answered " + string(o.answer)
	switch {
	case errors.Is(o.err, ErrAnsweredElsewhere):
		what = o.err.Error()
	case o.err != nil:
		what = "denied: " + o.err.Error()
	}
	b.settled = append(b.settled, settledQuestion{w.q.ID, what})
	if len(b.settled) > keepSettled {
		b.settled = slices.Delete(b.settled, 0, len(b.settled)-keepSettled)
	}
	w.result <- o
}

// Pending returns the questions waiting for an answer, oldest first.
func (b *Broker) Pending() []Question {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pendingLocked()
}

func (b *Broker) pendingLocked() []Question {
	qs := make([]Question, 0, len(b.pending))
	for _, w := range b.pending {
		qs = append(qs, w.q)
	}
	sortQuestions(qs)
	return qs
}

func sortQuestions(qs []Question) {
	slices.SortFunc(qs, func(a, b Question) int {
		if c := a.Asked.Compare(b.Asked); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Close stops serving, removes the socket file and denies every pending
// question with ErrClosed.
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()

	err := b.ln.Close() // also unlinks the socket file
	<-b.done
	b.conns.Wait()
	if rmErr := os.Remove(b.path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) && err == nil {
		err = rmErr
	}
	heldMu.Lock()
	delete(held, b.path)
	heldMu.Unlock()
	if b.ownDir != "" {
		_ = os.Remove(b.ownDir)
	}

	b.mu.Lock()
	for _, w := range b.pending {
		b.settleLocked(w, outcome{Deny, ErrClosed})
	}
	b.mu.Unlock()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("close control socket: %w", err)
	}
	return nil
}

func (b *Broker) acceptLoop() {
	defer close(b.done)
	for {
		conn, err := b.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			b.logger.Warn("control socket accept", "err", err)
			time.Sleep(50 * time.Millisecond) // e.g. out of file descriptors
			continue
		}
		b.conns.Go(func() { b.serveConn(conn) })
	}
}

func (b *Broker) serveConn(conn *net.UnixConn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(connDeadline))
	uid, err := peerUID(conn)
	if err != nil || uid != b.uid {
		b.logger.Warn("control socket: refused a peer", "peer_uid", uid, "err", err)
		writeResponse(conn, response{Error: "permission denied: not the user running corvid"})
		return
	}
	// Only a person answers: a process corvid started (an allowed command,
	// an MCP server, anything they left behind) could otherwise approve
	// corvid's next actions itself (issue 35).
	if err := refuseDescendant(conn); err != nil {
		b.logger.Warn("control socket: refused a peer", "err", err)
		writeResponse(conn, response{Error: "permission denied: " + err.Error()})
		return
	}
	var req request
	if err := json.NewDecoder(io.LimitReader(conn, 64<<10)).Decode(&req); err != nil {
		writeResponse(conn, response{Error: "bad request: " + err.Error()})
		return
	}
	writeResponse(conn, b.handle(req))
}

func (b *Broker) handle(req request) response {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch req.Op {
	case opList:
		resp := response{Questions: b.pendingLocked()}
		if len(b.settled) > 0 {
			resp.Settled = map[string]string{}
			for _, s := range b.settled {
				resp.Settled[s.id] = s.what
			}
		}
		return resp
	case opReply:
		w := b.pending[req.ID]
		if w == nil {
			return response{Error: fmt.Sprintf("%s: %s", ErrUnknownQuestion, req.ID)}
		}
		a, err := w.q.ParseReply(string(req.Answer))
		if err != nil {
			return response{Error: err.Error()}
		}
		b.settleLocked(w, outcome{answer: a})
		b.logger.Info("permission question answered through corvid respond", "id", req.ID, "answer", a)
		return response{}
	}
	return response{Error: fmt.Sprintf("unknown op %q", req.Op)}
}

func writeResponse(w io.Writer, resp response) {
	_ = json.NewEncoder(w).Encode(resp)
}
