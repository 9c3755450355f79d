package tui

import (
	"io"
	"sync"
)

// A print of a long answer is a write of tens of kilobytes to the
// terminal, and a terminal takes it at its own pace: written in
// bubbletea's event loop (insertAbove), each print held the loop in
// write(2) for as long, during which no update was rendered and no view
// drawn (a 10 MB answer: about half its time). So the writes go through
// outPipe: a write is copied into a queue and returns, and a goroutine of
// its own writes the queue to the terminal, in order. bubbletea's model of
// the screen stays true, since the terminal gets the same bytes in the
// same order; only when they leave the program changes. The queue holds
// at most about pipeMax bytes beyond the write in progress (a write finds
// it fuller waits), so that a print is never much further from the
// terminal than one write was: a resize the print's parts were not made
// for (print.go, filterPrint) still finds at most that much on its way.

// pipeMax is about the most bytes queued for the terminal beyond the write
// in progress: about two of the prints spill.go makes.
const pipeMax = 2 * spillBytes

// outPipe writes to w from a goroutine of its own what Write queues.
type outPipe struct {
	w    io.Writer
	mu   sync.Mutex
	cond sync.Cond
	buf  []byte // queued, not yet taken by the writer
	// spare is the buffer the writer last wrote, for the next queue.
	spare   []byte
	writing bool  // the writer is writing what it took
	err     error // the first error writing; later writes return it
	closed  bool
	// direct says a write waits until the queue is written and is then
	// written at once (setDirect).
	direct bool
}

func newOutPipe(w io.Writer) *outPipe {
	p := &outPipe{w: w}
	p.cond.L = &p.mu
	go p.loop()
	return p
}

// Write queues b for the terminal, after what is queued; it waits while
// the queue holds pipeMax bytes or more.
func (p *outPipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) >= pipeMax && p.err == nil && !p.closed {
		p.cond.Wait()
	}
	if p.err != nil {
		return 0, p.err
	}
	if p.closed {
		return 0, io.ErrClosedPipe
	}
	if p.direct {
		for (len(p.buf) > 0 || p.writing) && p.err == nil {
			p.cond.Wait()
		}
		if p.err != nil {
			return 0, p.err
		}
		return p.w.Write(b) // under mu: the writer waits
	}
	p.buf = append(p.buf, b...)
	p.cond.Broadcast()
	return len(b), nil
}

// loop writes the queue, all of it at a time, until the pipe is closed
// and empty.
func (p *outPipe) loop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		for len(p.buf) == 0 && !p.closed {
			p.cond.Wait()
		}
		if len(p.buf) == 0 {
			return
		}
		b := p.buf
		p.buf, p.writing = p.spare[:0], true
		p.mu.Unlock()
		_, err := p.w.Write(b)
		p.mu.Lock()
		p.spare, p.writing = b, false
		if err != nil && p.err == nil {
			p.err = err
		}
		if p.err != nil {
			p.buf = p.buf[:0] // nothing more reaches the terminal
		}
		p.cond.Broadcast()
	}
}

// Flush waits until everything queued was written, and returns the first
// error writing.
func (p *outPipe) Flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for (len(p.buf) > 0 || p.writing) && p.err == nil {
		p.cond.Wait()
	}
	return p.err
}

// setDirect makes each write reach the terminal before it returns (on),
// or queued again (off). bubbletea changes the terminal's modes after its
// last writes when it quits or hands the terminal to another program (the
// editor, Ctrl+G): those writes must be on the terminal by then.
func (p *outPipe) setDirect(on bool) {
	p.mu.Lock()
	p.direct = on
	p.mu.Unlock()
}

// Close writes what is queued and ends the writer.
func (p *outPipe) Close() error {
	err := p.Flush()
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
	return err
}

// outDirect makes the terminal's writes direct, or queued again
// (outPipe.setDirect).
func (m *model) outDirect(on bool) {
	if m.out != nil {
		m.out.setDirect(on)
	}
}
