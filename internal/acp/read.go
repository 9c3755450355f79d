package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"unicode/utf8"
)

func (c *Conn) readLoop(ctx context.Context) error {
	br := bufio.NewReaderSize(c.r, c.opts.ReadBuffer)
	discarding := false // the rest of a line already refused as too long
	for {
		line, tooLong, err := c.readLine(br, &discarding)
		if ctx.Err() != nil {
			return ctx.Err() // Serve has returned; nobody would answer
		}
		if tooLong > 0 {
			c.sendError(nil, NewError(CodeInvalidRequest, "Request too large",
				fmt.Sprintf("a line of at least %d bytes exceeds the %d-byte frame limit", tooLong, c.opts.MaxLineBytes)))
		} else if len(line) > 0 {
			c.handleFrames(ctx, line)
			// Let the dispatcher take the message on this thread now: the
			// next read blocks in the kernel holding the thread, and the
			// dispatcher would wait for another thread to wake up and take
			// it over (prompt → first chunk, ARCHITECTURE.md §7). A
			// cancelled ctx is seen once the next read returns. A line
			// whose notification this goroutine handled left the
			// dispatcher nothing: yielding would only put the reader at
			// the back of the run queue, for another thread to wake up and
			// take it (NotifyOnReader).
			if !c.notified {
				runtime.Gosched()
			}
			c.notified = false
		}
		if err != nil {
			return err
		}
	}
}

// readLine returns the next line without its terminator. A line whose
// content (without "\n" or "\r\n") is over the limit is reported as
// tooLong (its size so far) as soon as it passes the limit, without
// waiting for a newline that may never come (a peer on a daemon's socket),
// and *discarding is set: the next call drops the rest of that line, up to
// its newline, before it reads one. Nothing of it is buffered.
//
// A long line arrives in pieces of the reader's buffer size; they are kept
// as pieces and copied once into a line of the exact size, not appended to
// a growing array, which would copy the line several times over (issue
// 29: a 50 MB prompt).
func (c *Conn) readLine(br *bufio.Reader, discarding *bool) (line []byte, tooLong int, err error) {
	for *discarding {
		_, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		*discarding = false
		if err != nil {
			return nil, 0, err
		}
	}
	var pieces [][]byte
	size := 0
	for {
		frag, err := br.ReadSlice('\n')
		// Stop buffering once the line cannot fit even with a "\r\n" terminator.
		if tooLong == 0 && size+len(frag) > c.opts.MaxLineBytes+2 {
			tooLong = size + len(frag)
			pieces = nil
		}
		if tooLong > 0 {
			if errors.Is(err, bufio.ErrBufferFull) {
				*discarding = true // report it now; drop the rest next
				return nil, tooLong, nil
			}
			return nil, tooLong, err
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			pieces = append(pieces, bytes.Clone(frag)) // frag is only valid until the next read
			size += len(frag)
			continue
		}
		if c.opts.LendParams && len(pieces) == 0 && len(frag) <= min(lendMax, c.opts.MaxLineBytes) {
			return c.lendLine(frag), 0, err
		}
		buf := make([]byte, 0, size+len(frag))
		for _, p := range pieces {
			buf = append(buf, p...)
		}
		pieces = nil
		buf = append(buf, frag...)
		content := bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
		if len(content) > c.opts.MaxLineBytes {
			return nil, len(content), err
		}
		return bytes.TrimSpace(buf), 0, err
	}
}

// handleFrames handles one line. A line that is not JSON but holds bare
// CRs is several frames from a peer that ends lines with "\r" alone: each
// part is handled on its own rather than lost together. (A CR may also be
// JSON whitespace, so a line that parses whole stays one frame.)
func (c *Conn) handleFrames(ctx context.Context, line []byte) {
	lent := c.lentLine
	c.lentLine = nil
	if bytes.IndexByte(line, '\r') < 0 || validJSON(line) {
		c.handleLine(ctx, line, lent)
		return
	}
	for part := range bytes.SplitSeq(line, []byte("\r")) {
		if part = bytes.TrimSpace(part); len(part) > 0 {
			c.handleLine(ctx, part, nil) // parts of one line: not lent
		}
	}
}

// handleLine handles one frame; lent, if set, is the lent buffer that
// line is in (lend.go).
func (c *Conn) handleLine(ctx context.Context, line []byte, lent *[]byte) {
	msg, rpcErr := c.decode(line, lent)
	if msg != nil {
		msg.big = len(line) >= bigFrame
	}
	if rpcErr != nil {
		var id json.RawMessage
		if msg != nil && msg.hasID {
			id = msg.ID
		}
		c.sendError(id, rpcErr)
		return
	}
	if msg.Method == "$/cancel_request" {
		c.cancelActive(msg.Params)
		if !msg.hasID {
			return
		}
		// Sent as a request, against the spec: it still needs an answer,
		// so the handler gets it like any other request.
	}
	switch {
	case msg.Method == "" && msg.hasID:
		c.routeResponseInOrder(msg)
	case !msg.hasID && c.notifyOnReader(ctx, msg):
		c.notified = true
	default:
		if msg.hasID {
			// Register now so a $/cancel_request right behind it finds it.
			reqCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
			msg.ctx, msg.cancel = reqCtx, cancel
			c.mu.Lock()
			c.active[string(msg.ID)] = msg
			c.mu.Unlock()
		}
		c.queueMu.Lock()
		c.queue = append(c.queue, msg)
		if !msg.hasID {
			c.notesQueued++
		}
		c.queueCond.Broadcast()
		c.queueMu.Unlock()
	}
}

// lineSpan is a JSON value kept as the bytes of the line it was decoded
// from (json.RawMessage would copy them).
type lineSpan []byte

func (r *lineSpan) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// decodeMessage parses one frame and classifies JSON-RPC envelope errors.
func decodeMessage(line []byte) (*wireMessage, *Error) {
	return decodeInto(&wireMessage{}, line)
}

// decodeInto is decodeMessage into msg, which must be zero.
func decodeInto(msg *wireMessage, line []byte) (*wireMessage, *Error) {
	// A frame (an object) is checked and its members found in one walk.
	if start := skipSpace(line, 0); start < len(line) && line[start] == '{' {
		env, valid := scanValidEnvelope(line, start)
		if !valid {
			return nil, NewError(CodeParseError, "Parse error", "the line is not valid JSON")
		}
		return decodeEnvelope(msg, env)
	}
	if !validJSON(line) {
		return nil, NewError(CodeParseError, "Parse error", "the line is not valid JSON")
	}
	// Valid JSON that is not an object.
	detail := "expected a JSON object"
	if line[skipSpace(line, 0)] == '[' {
		detail = "batch arrays are not supported in ACP v1; send one JSON object per line"
	}
	return nil, NewError(CodeInvalidRequest, "Invalid request", detail)
}

// decodeEnvelope is decodeInto for a valid frame's members. The values
// alias the line, which is this message's own (readLine makes a fresh one
// per line, or lends one: lend.go): params are not copied.
func decodeEnvelope(msg *wireMessage, env envelope) (*wireMessage, *Error) {
	if env.id != nil {
		if !validID(json.RawMessage(env.id)) {
			return nil, NewError(CodeInvalidRequest, "Invalid request", "id must be a string, a whole number within int64, or null")
		}
		// A copy: the id outlives the line (in Conn.active, the answer).
		msg.ID, msg.hasID = echoableID(json.RawMessage(bytes.Clone(env.id))), true
	}
	if version, ok := jsonString(env.jsonrpc); !ok || version != "2.0" {
		return msg, NewError(CodeInvalidRequest, "Invalid request", `"jsonrpc" must be "2.0"`)
	}
	if env.method != nil {
		method, ok := "session/update", true // the most frequent, not copied
		if string(env.method) != `"session/update"` {
			method, ok = jsonString(env.method)
		}
		if !ok || method == "" {
			return msg, NewError(CodeInvalidRequest, "Invalid request", `"method" must be a non-empty string`)
		}
		msg.Method = method
		if env.params != nil && string(env.params) != "null" {
			msg.Params = json.RawMessage(env.params)
		}
		return msg, nil
	}
	if !msg.hasID {
		return msg, NewError(CodeInvalidRequest, "Invalid request", `a message needs "method" (request or notification) or "id" (response)`)
	}
	if (env.result != nil) == (env.error != nil) {
		return nil, NewError(CodeInvalidRequest, "Invalid request", `a response has exactly one of "result" and "error"`)
	}
	msg.Result = json.RawMessage(env.result)
	if env.error != nil {
		msg.Error = &Error{}
		if json.Unmarshal(env.error, msg.Error) != nil {
			msg.Error = &Error{Code: CodeInternalError, Message: "malformed error object from peer"}
		}
	}
	return msg, nil
}

func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"':
		if _, ok := plainJSONString(id); ok {
			return true
		}
		var s string
		return json.Unmarshal(id, &s) == nil
	case 'n':
		return string(id) == "null"
	default:
		// The schema's RequestId is an int64 "integer", which in its JSON
		// Schema 2020-12 includes 1.0 and 1e2: any number whose value is a
		// whole int64 is valid, and it is echoed byte for byte.
		if smallJSONInt(id) {
			return true
		}
		if id[0] != '-' && (id[0] < '0' || id[0] > '9') || !json.Valid(id) {
			return false
		}
		r, ok := new(big.Rat).SetString(string(id))
		return ok && r.IsInt() && r.Num().IsInt64()
	}
}

// echoableID returns a valid id as it is echoed. Ids are echoed byte for
// byte, except a string id that is not valid UTF-8: frames must be UTF-8, so
// it is re-encoded with U+FFFD for the bad bytes (as its decoded value has).
func echoableID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 || id[0] != '"' || utf8.Valid(id) {
		return id
	}
	var s string
	if json.Unmarshal(id, &s) != nil {
		return id
	}
	b, err := json.Marshal(s)
	if err != nil {
		return id
	}
	return b
}
