package codemode

import (
	"strconv"
	"strings"
	"unicode"

	"go.starlark.net/starlark"
)

// Estimates, in bytes, of what an operation is about to allocate, for
// budget.reserve. Each is computed from the operands alone, without
// allocating in proportion to the result, and stops counting once past room
// (the caller refuses anything that large anyway).

// What one element costs where the interpreter stores it.
const (
	slotBytes  = 16 // a Value in a list or tuple
	boxBytes   = 16 // a String header boxed into a Value (split, elems)
	entryBytes = 64 // a dict or set entry in Starlark's hash table
	pairBytes  = 56 // a 2-tuple (enumerate, dict.items)
)

// textSize estimates len(str(v)), or len(repr(v)) when quoted, stopping
// once past room. Nested values are reprs; a list that holds itself prints
// as [...], as Starlark prints it.
func textSize(v starlark.Value, quoted bool, room int64) int64 {
	s := sizer{room: room}
	s.value(v, quoted)
	return s.n
}

type sizer struct {
	n, room int64
	path    []starlark.Value // the containers being printed, for cycles
	deepest int              // the most containers open at once
}

func (s *sizer) value(v starlark.Value, quoted bool) {
	if s.n > s.room {
		return
	}
	switch v := v.(type) {
	case starlark.String:
		if quoted {
			s.n += quotedLen(string(v))
		} else {
			s.n += int64(len(v))
		}
	case starlark.Bytes:
		s.n += 1 + quotedLen(string(v))
	case starlark.Int:
		if _, ok := v.Int64(); ok {
			s.n += 20
		} else {
			s.n += int64(v.BigInt().BitLen()/3 + 2)
		}
	case *starlark.List:
		if s.enter(v) {
			for i := 0; i < v.Len() && s.n <= s.room; i++ {
				s.value(v.Index(i), true)
				s.n += 2
			}
			s.leave()
		}
	case starlark.Tuple:
		s.n += 2 // a tuple cannot hold itself without a list in between
		for _, x := range v {
			s.value(x, true)
			s.n += 2
		}
	case *starlark.Dict:
		if s.enter(v) {
			it := v.Iterate()
			var k starlark.Value
			for it.Next(&k) && s.n <= s.room {
				x, _, _ := v.Get(k)
				s.value(k, true)
				s.value(x, true)
				s.n += 4
			}
			it.Done()
			s.leave()
		}
	case *starlark.Set:
		if s.enter(v) {
			s.n += 5
			it := v.Iterate()
			var x starlark.Value
			for it.Next(&x) && s.n <= s.room {
				s.value(x, true)
				s.n += 2
			}
			it.Done()
			s.leave()
		}
	default:
		// Numbers, None, functions, modules: short. A string's lazy
		// views ("...".elems()) print their string.
		s.n += 32
		if n := starlark.Len(v); n > 0 {
			s.n += int64(n)
		}
	}
}

// enter pushes a container on the path; false (after counting "[...]")
// when it is already being printed.
func (s *sizer) enter(v starlark.Value) bool {
	for _, p := range s.path {
		if p == v {
			s.n += 5
			return false
		}
	}
	s.path = append(s.path, v)
	s.deepest = max(s.deepest, len(s.path))
	s.n += 2
	return true
}

func (s *sizer) leave() { s.path = s.path[:len(s.path)-1] }

// quotedLen bounds len(repr(s)): a byte that may be escaped counts as \xNN.
func quotedLen(s string) int64 {
	n := int64(len(s)) + 2
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			n += 3
		}
	}
	return n
}

// percentSize bounds len(format % args).
func percentSize(format string, args starlark.Value, room int64) int64 {
	n := int64(len(format))
	switch a := args.(type) {
	case starlark.Tuple:
		// Each directive takes the next element once.
		n += textSize(a, true, room)
	case *starlark.Dict:
		// %(key)s may name one value many times.
		directives := int64(strings.Count(format, "%"))
		var most int64
		it := a.Iterate()
		var k starlark.Value
		for it.Next(&k) && most*directives <= room {
			x, _, _ := a.Get(k)
			most = max(most, textSize(x, true, room))
		}
		it.Done()
		n += most * directives
	default:
		n += textSize(a, true, room)
	}
	return n
}

// formatSize bounds len(format.format(*args, **kwargs)) by resolving each
// replacement field as str.format does; fields it cannot resolve fail in
// the real call and count nothing.
func formatSize(format string, args starlark.Tuple, kwargs []starlark.Tuple, room int64) int64 {
	n := int64(len(format))
	auto := 0
	for n <= room {
		i := strings.IndexByte(format, '{')
		if i < 0 {
			break
		}
		if i+1 < len(format) && format[i+1] == '{' {
			format = format[i+2:]
			continue
		}
		format = format[i+1:]
		j := strings.IndexByte(format, '}')
		if j < 0 {
			break
		}
		field := format[:j]
		format = format[j+1:]
		name, conv, _ := strings.Cut(field, "!")
		name, _, _ = strings.Cut(name, ":")
		var arg starlark.Value
		if name == "" {
			if auto < len(args) {
				arg = args[auto]
			}
			auto++
		} else if k, err := strconv.Atoi(name); err == nil {
			if k >= 0 && k < len(args) {
				arg = args[k]
			}
		} else {
			for _, kv := range kwargs {
				if s, _ := starlark.AsString(kv[0]); s == name {
					arg = kv[1]
				}
			}
		}
		if arg != nil {
			n += textSize(arg, strings.HasPrefix(conv, "r"), room-n)
		}
	}
	return n
}

// joinSize bounds len(sep.join(x)).
func joinSize(sep string, x starlark.Value, room int64) int64 {
	it := starlark.Iterate(x)
	if it == nil {
		return 0
	}
	defer it.Done()
	var n int64
	var v starlark.Value
	for it.Next(&v) && n <= room {
		if s, ok := v.(starlark.String); ok {
			n += int64(len(s))
		}
		n += int64(len(sep))
	}
	return n
}

// replaceSize is len(s.replace(old, new, count)) (count < 0: all).
func replaceSize(s, old, new string, count int) int64 {
	k := strings.Count(s, old)
	if count >= 0 && count < k {
		k = count
	}
	return max(int64(len(s))+int64(k)*int64(len(new)-len(old)), 0)
}

// splitParts bounds the number of strings s.split(sep) yields (sep ""
// means runs of white space); maxsplit < 0 means no bound.
func splitParts(s, sep string, maxsplit int) int64 {
	var k int64
	if sep == "" {
		inField := false
		for _, r := range s {
			space := unicode.IsSpace(r)
			if !space && !inField {
				k++
			}
			inField = !space
		}
	} else {
		k = int64(strings.Count(s, sep)) + 1
	}
	if maxsplit >= 0 {
		k = min(k, int64(maxsplit)+1)
	}
	return k
}

// lengthOf is the number of elements x yields, counting (up to limit) when
// x does not know its length; -1 if x is not iterable.
func lengthOf(x starlark.Value, limit int64) int64 {
	if n := starlark.Len(x); n >= 0 {
		return int64(n)
	}
	it := starlark.Iterate(x)
	if it == nil {
		return -1
	}
	defer it.Done()
	var n int64
	var v starlark.Value
	for n <= limit && it.Next(&v) {
		n++
	}
	return n
}
