package store

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// How an event row is stored (schema version 2). The events.kind column
// holds kindID<<2 | form, where kindID names a row of event_kinds, so each
// kind string is stored once per database. The form says how the payload
// column relates to the payload the caller appended:
//
//   - formRaw: the payload itself.
//   - formNoKind: the payload began with {"kind":"<kind>", — the kind the
//     row already names — and the stored bytes are "{" and the rest.
//   - formDelta: the payload shares a prefix and a suffix with the payload of
//     the session's previous event (seq-1); the stored bytes are
//     uvarint(prefix length) uvarint(suffix length) and the bytes between.
//     Consecutive streamed chunks of one message differ only in their text,
//     so a one-character chunk stores about three payload bytes.
//
// Every form gives back the appended bytes exactly. Rows migrated from
// version 1 are formRaw.
const (
	formRaw    = 0
	formNoKind = 1
	formDelta  = 2
	formBits   = 2
)

// maxDeltaBase bounds the payload the writer keeps per session as the base
// of the next delta; a larger payload is stored whole and not kept.
const maxDeltaBase = 64 << 10

var errBadRow = errors.New("malformed event row")

// kindHead is the start of a payload that names kind first, as the agent's
// events do: {"kind":"<kind>",
func kindHead(kind string) []byte {
	return []byte(`{"kind":"` + kind + `",`)
}

// encodeRow chooses the smallest form for payload given the previous
// payload of the session (nil when unknown) and appends the stored bytes to
// dst. kindHead is `{"kind":"<kind>",`.
func encodeRow(dst, payload, prev, kindHead []byte) (form int, out []byte) {
	form, p, s := chooseForm(payload, prev, kindHead)
	return form, appendRow(dst, form, p, s, payload, kindHead)
}

// chooseForm picks encodeRow's form; for formDelta, p and s are the
// lengths of the prefix and the suffix shared with prev.
func chooseForm(payload, prev, kindHead []byte) (form, p, s int) {
	form = formRaw
	best := len(payload)
	if len(payload) >= len(kindHead) && bytes.HasPrefix(payload, kindHead) {
		form = formNoKind
		best = len(payload) - len(kindHead) + 1
	}
	if prev != nil {
		p := commonPrefix(payload, prev)
		s := commonSuffix(payload[p:], prev[p:])
		if uvarintLen(p)+uvarintLen(s)+len(payload)-p-s < best {
			return formDelta, p, s
		}
	}
	return form, 0, 0
}

// appendRow appends payload's stored bytes in form to dst.
func appendRow(dst []byte, form, p, s int, payload, kindHead []byte) []byte {
	switch form {
	case formDelta:
		dst = binary.AppendUvarint(dst, uint64(p))
		dst = binary.AppendUvarint(dst, uint64(s))
		return append(dst, payload[p:len(payload)-s]...)
	case formNoKind:
		return append(append(dst, '{'), payload[len(kindHead):]...)
	}
	return append(dst, payload...)
}

// rawRowMin is the payload size from which the writer stores a row that
// no delta shrinks as it is (formRaw) rather than without its kind
// (formNoKind): then the stored bytes are the payload itself, bound
// without a copy. For a streamed answer's 64 KiB rows the copy into
// fresh memory cost more CPU than the ~30 bytes of kind saved (issue 36).
const rawRowMin = 4 << 10

// rowBytes is encodeRow for the writer: it returns the stored bytes and
// dst, grown by them unless they are payload itself (see rawRowMin).
func rowBytes(dst, payload, prev, kindHead []byte) (form int, stored, out []byte) {
	form, p, s := chooseForm(payload, prev, kindHead)
	if form != formDelta && len(payload) >= rawRowMin {
		return formRaw, payload, dst
	}
	start := len(dst)
	dst = appendRow(dst, form, p, s, payload, kindHead)
	return form, dst[start:len(dst):len(dst)], dst
}

// decodeRow appends the payload a row stands for to dst. prev is the
// payload of the session's previous event.
func decodeRow(dst []byte, form int, stored, prev, kindHead []byte) ([]byte, error) {
	switch form {
	case formRaw:
		return append(dst, stored...), nil
	case formNoKind:
		if len(stored) == 0 || stored[0] != '{' {
			return nil, errBadRow
		}
		return append(append(dst, kindHead...), stored[1:]...), nil
	case formDelta:
		p, n := binary.Uvarint(stored)
		if n <= 0 {
			return nil, errBadRow
		}
		s, m := binary.Uvarint(stored[n:])
		if m <= 0 || p+s > uint64(len(prev)) {
			return nil, errBadRow
		}
		dst = append(dst, prev[:p]...)
		dst = append(dst, stored[n+m:]...)
		return append(dst, prev[uint64(len(prev))-s:]...), nil
	}
	return nil, errBadRow
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

func uvarintLen(v int) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
