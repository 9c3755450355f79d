package serve

import "time"

// mailbox is one outbound stream of a connection: the messages queued for
// it, in order, and at most one receiver (an SSE response, a WebSocket or
// unix-socket pump) taking them. Its fields are guarded by the owning
// conn's mu; wake is signalled (never blocking) whenever a message arrives
// or the connection closes.
type mailbox struct {
	q      [][]byte
	leased bool
	// since is when the oldest queued message started waiting for a
	// receiver that holds the lease: the output-stall clock.
	since time.Time
	wake  chan struct{}
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1)} }

func (m *mailbox) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// push queues msg; the caller holds the conn's lock.
func (m *mailbox) push(msg []byte, now time.Time) {
	if len(m.q) == 0 {
		m.since = now
	}
	m.q = append(m.q, msg)
	m.signal()
}

// pop takes the oldest message; the caller holds the conn's lock.
func (m *mailbox) pop(now time.Time) ([]byte, bool) {
	if len(m.q) == 0 {
		return nil, false
	}
	msg := m.q[0]
	m.q[0] = nil
	m.q = m.q[1:]
	if len(m.q) == 0 {
		m.q = nil
	}
	m.since = now
	return msg, true
}

// stalled reports whether a receiver holds the stream and has taken none of
// its messages for limit.
func (m *mailbox) stalled(now time.Time, limit time.Duration) bool {
	return m.leased && len(m.q) > 0 && now.Sub(m.since) > limit
}
