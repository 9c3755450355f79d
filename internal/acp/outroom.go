package acp

// maxQueuedBytes bounds the bytes of frames queued for the writer. The
// queue also holds at most 4096 frames, but frames of 64 KiB (a long
// answer's chunks) would make that 256 MiB: a client that reads slower
// than the model streams then holds the model back at a few MiB of
// frames instead (issue 29: a large answer cost many times its size).
const maxQueuedBytes = 4 << 20

// reserve counts n bytes of a frame about to be queued, first waiting
// while the queue holds other frames and n would take it past
// maxQueuedBytes.
func (c *Conn) reserve(n int) {
	if c.queued.Add(int64(n)) <= maxQueuedBytes || c.queued.Load() == int64(n) {
		return
	}
	c.queued.Add(-int64(n))
	c.roomMu.Lock()
	c.waiting.Add(1)
	for {
		q := c.queued.Load()
		if q == 0 || q+int64(n) <= maxQueuedBytes || c.ended {
			break
		}
		c.room.Wait()
	}
	c.queued.Add(int64(n))
	c.waiting.Add(-1)
	c.roomMu.Unlock()
}

// taken gives back the room of a frame the writer took (a Run's buffers
// are bounded by their slots instead, and never counted).
func (c *Conn) taken(f outFrame) {
	if f.reuse {
		return
	}
	c.queued.Add(-int64(len(f.b)))
	if c.waiting.Load() > 0 {
		c.roomMu.Lock()
		c.room.Broadcast()
		c.roomMu.Unlock()
	}
}

// writerEnded wakes every sender waiting for room: nothing will take
// their frames (they find writerDone closed).
func (c *Conn) writerEnded() {
	c.roomMu.Lock()
	c.ended = true
	c.room.Broadcast()
	c.roomMu.Unlock()
}
