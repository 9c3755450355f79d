package acp

import "encoding/binary"

// validJSON is json.Valid, in one pass without the standard scanner's
// call per byte: a line is mostly the text inside a few strings (a
// streamed chunk is one 4 KiB string), which it walks with a table.
// FuzzValidJSON and TestValidJSONIsJSONValid hold it to json.Valid,
// nesting limit included; like it, it does not check UTF-8.
func validJSON(b []byte) bool {
	i := validValueEnd(b, skipSpace(b, 0), maxNesting)
	return i >= 0 && skipSpace(b, i) == len(b)
}

// validValueEnd returns the index just after the valid JSON value that
// starts at b[i], or -1; its containers may nest room deep. validJSON is
// one such value with space around it, and scanValidEnvelope checks a
// frame's members with it as it finds them (envelope.go).
func validValueEnd(b []byte, i, room int) int {
	var open [32]byte
	stack := open[:0] // the open containers, '{' or '['
	for {
		// A value starts at i.
		if i >= len(b) {
			return -1
		}
		if c := b[i]; c == '{' || c == '[' {
			if len(stack) >= room {
				return -1
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == closing(c) {
				i++ // empty
			} else {
				stack = append(stack, c)
				if c == '{' {
					if i = objectKey(b, i); i < 0 {
						return -1
					}
				}
				continue
			}
		} else if i = scalarEnd(b, i); i < 0 {
			return -1
		}
		var done bool
		if i, stack, done = nextValue(b, i, stack); done || i < 0 {
			return i
		}
	}
}

// nextValue reads what follows a value that ends at b[i]: closing
// brackets, then a comma (and a member's key) before the next value,
// whose start it returns, or -1. done says no container is open: i is
// then just after the outermost value.
func nextValue(b []byte, i int, stack []byte) (next int, open []byte, done bool) {
	for {
		if len(stack) == 0 {
			return i, stack, true
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return -1, stack, false
		}
		top := stack[len(stack)-1]
		if b[i] == closing(top) {
			stack = stack[:len(stack)-1]
			i++
			continue
		}
		if b[i] != ',' {
			return -1, stack, false
		}
		i = skipSpace(b, i+1)
		if top == '{' {
			i = objectKey(b, i)
		}
		return i, stack, false
	}
}

func closing(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}

// scalarEnd returns the index after the string, number or literal at
// b[i], or -1.
func scalarEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case 't':
		return literalEnd(b, i, "true")
	case 'f':
		return literalEnd(b, i, "false")
	case 'n':
		return literalEnd(b, i, "null")
	}
	return numberEnd(b, i)
}

// maxNesting is encoding/json's limit on nested containers.
const maxNesting = 10000

// objectKey reads a member's key and colon at b[i] and returns where its
// value starts, or -1.
func objectKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = stringEnd(b, i); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringStop marks the bytes that end a run of a string's plain text: a
// control character (invalid), a quote and a backslash.
var stringStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// stringEnd returns the index after the string whose quote is b[i], or -1.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		if i = plainRun(b, i); i >= len(b) {
			break
		}
		if !stringStop[b[i]] {
			continue
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return -1
				}
				i += 4
			default:
				return -1
			}
		default:
			return -1 // a control character
		}
	}
	return -1
}

// plainRun skips the plain text of a string from b[i] eight bytes at a
// time, up to the word that holds a byte of stringStop (or the last
// bytes, fewer than eight), and returns where it stopped: the byte loop
// of stringEnd took a streamed chunk's 4 KiB at about 300 MB/s.
func plainRun(b []byte, i int) int {
	for i+8 <= len(b) && !stopIn(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	return i
}

// stopIn tells whether one of the eight bytes of x is below 0x20, a quote
// or a backslash (the tests for a zero byte and for a byte below n, exact
// for the word as a whole).
func stopIn(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := x^(ones*'"'), x^(ones*'\\')
	return ((x-ones*0x20)&^x|(q-ones)&^q|(bs-ones)&^bs)&highs != 0
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func literalEnd(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// numberEnd returns the index after the number at b[i], or -1:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i+1 >= len(b) || b[i+1] < '0' || b[i+1] > '9' {
			return -1
		}
		i = digitsEnd(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return -1
		}
		i = digitsEnd(b, i)
	}
	return i
}

func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
