package acp

import "bytes"

// With Options.LendParams, a notification's line and its message are lent
// to the handler and taken back once it returns: a fast peer's
// notifications then cost the garbage collector nothing for either. A
// request's or a response's line is never lent (their values outlive the
// dispatch), nor the parts of a line split at bare CRs, nor a line over
// lendMax; those are left to the collector.

// lendMax is the longest line read into a lent buffer: as long as a line
// the default read buffer holds whole. A streamed chunk's line is some
// 4.3 KiB (4 KiB of text, escapes and the envelope), and a limit of 4 KiB
// left every line of a long answer to the collector (issue 36: 10 MB of
// garbage for a 10 MB answer in the terminal UI). The pool holds as many
// buffers as there were notifications in flight at once.
const lendMax = 64 << 10

// lendLine copies frag, a whole line, into a lent buffer and returns it
// trimmed; handleFrames takes the buffer (lentLine).
func (c *Conn) lendLine(frag []byte) []byte {
	p, _ := c.lines.Get().(*[]byte)
	if p == nil || cap(*p) < len(frag) {
		b := make([]byte, 0, max(len(frag), 256))
		p = &b
	}
	*p = append((*p)[:0], frag...)
	c.lentLine = p
	return bytes.TrimSpace(*p)
}

// decode decodes a line; one in a lent buffer is decoded into a lent
// message, which keeps the buffer when it is a notification.
func (c *Conn) decode(line []byte, lent *[]byte) (*wireMessage, *Error) {
	if lent == nil {
		return decodeMessage(line)
	}
	msg, _ := c.msgs.Get().(*wireMessage)
	if msg == nil {
		msg = &wireMessage{}
	}
	msg, rpcErr := decodeInto(msg, line)
	if rpcErr == nil && !msg.hasID && msg.Method != "$/cancel_request" {
		msg.line = lent
	}
	return msg, rpcErr
}

// giveBack takes back a handled notification's lent line and message.
func (c *Conn) giveBack(msg *wireMessage) {
	if msg.line == nil {
		return
	}
	c.lines.Put(msg.line)
	*msg = wireMessage{}
	c.msgs.Put(msg)
}
