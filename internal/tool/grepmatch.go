package tool

import (
	"bytes"
	"regexp/syntax"
	"unicode"
)

// eachMatchingLine calls fn with the bounds of every line of data that
// matches, in order, until fn returns false. With a required literal the
// candidates come from bytes.Index (vectorised) and the regexp only checks
// single lines; otherwise the regexp scans the buffer once and each hit is
// confirmed on its own line, since a buffer-wide match may span lines.
func (q *grepQuery) eachMatchingLine(data []byte, fn func(start, end int) bool) {
	pos := 0
	for pos < len(data) {
		var at int
		if q.lit != nil {
			i := bytes.Index(data[pos:], q.lit)
			if i < 0 {
				return
			}
			at = pos + i
		} else {
			loc := q.re.FindIndex(data[pos:])
			if loc == nil {
				return
			}
			at = pos + loc[0]
		}
		s, e := lineStartAt(data, at), lineEndAt(data, at)
		if q.litOnly || q.re.Match(data[s:e]) {
			if !fn(s, e) {
				return
			}
		}
		pos = e + 1
	}
}

// lineStartAt is the offset of the line holding data[at].
func lineStartAt(data []byte, at int) int {
	return bytes.LastIndexByte(data[:at], '\n') + 1
}

// lineEndAt is the offset of the newline ending the line holding data[at],
// or len(data).
func lineEndAt(data []byte, at int) int {
	if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
		return at + i
	}
	return len(data)
}

// requiredLiteral finds a literal that every match of pattern contains,
// the longest it can see, so whole files can be skipped with bytes.Index.
// litOnly reports that the pattern is that literal and nothing else.
func requiredLiteral(pattern string, foldCase bool) (lit []byte, litOnly bool) {
	flags := syntax.Perl
	if foldCase {
		flags |= syntax.FoldCase
	}
	re, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, false
	}
	re = re.Simplify()
	runes := required(re)
	if len(runes) == 0 {
		return nil, false
	}
	b := []byte(string(runes))
	if bytes.IndexByte(b, '\n') >= 0 {
		return nil, false
	}
	return b, re.Op == syntax.OpLiteral
}

func required(re *syntax.Regexp) []rune {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			for _, r := range re.Rune {
				if unicode.SimpleFold(r) != r {
					return nil
				}
			}
		}
		return re.Rune
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []rune
		for _, sub := range re.Sub {
			if r := required(sub); len(r) > len(best) {
				best = r
			}
		}
		return best
	}
	return nil
}
