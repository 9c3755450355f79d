package tool

import (
	"fmt"
	"strings"
	"sync"
)

// headTailBuffer keeps the first and the last bytes of a stream within a
// fixed budget: the start of a command's output says what it did, the end
// says how it finished.
type headTailBuffer struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte
	tail    []byte // grows to 2×tailCap, then keeps its last tailCap bytes
	dropped int64
}

func newHeadTailBuffer(limit int) *headTailBuffer {
	h := limit / 3
	return &headTailBuffer{headCap: h, tailCap: limit - h}
}

func (b *headTailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.headCap - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > 2*b.tailCap {
		cut := len(b.tail) - b.tailCap
		b.dropped += int64(cut)
		b.tail = append(b.tail[:0], b.tail[cut:]...)
	}
	return n, nil
}

// String returns the kept output and whether some was dropped.
func (b *headTailBuffer) String() (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail := b.tail
	dropped := b.dropped
	if len(tail) > b.tailCap {
		dropped += int64(len(tail) - b.tailCap)
		tail = tail[len(tail)-b.tailCap:]
	}
	if dropped == 0 {
		return strings.ToValidUTF8(string(b.head)+string(tail), "\uFFFD"), false
	}
	return capJoin(string(b.head), string(tail), dropped), true
}

// capJoin joins a head and a tail with a marker saying how much was cut.
func capJoin(head, tail string, dropped int64) string {
	return strings.ToValidUTF8(head, "\uFFFD") +
		fmt.Sprintf("\n… [%d bytes of output omitted] …\n", dropped) +
		strings.ToValidUTF8(tail, "\uFFFD")
}

// capText keeps the first head and last tail bytes of s.
func capText(s string, head, tail int) string {
	if len(s) <= head+tail {
		return s
	}
	return capJoin(s[:head], s[len(s)-tail:], int64(len(s)-head-tail))
}
