package tool

import (
	"bytes"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// eachMatchingLine calls fn with the bounds of every line of data that
// matches, in order, until fn returns false. With a required literal the
// candidates come from bytes.Index (vectorised) and the regexp only checks
// single lines; otherwise the regexp scans the buffer once and each hit is
// confirmed on its own line, since a buffer-wide match may span lines.
func (q *grepQuery) eachMatchingLine(data []byte, useLit bool, fn func(start, end int) bool) {
	pos := 0
	for pos < len(data) {
		var at int
		if useLit {
			i := q.find.index(data[pos:])
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
		if useLit && q.litOnly || q.re.Match(data[s:e]) {
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
// the longest it can see, so whole files can be skipped without running
// the regexp. fold reports that the literal matches case-insensitively
// (ASCII folding; see exoticFolds); litOnly that the pattern is that literal
// and nothing else.
func requiredLiteral(pattern string, foldCase bool) (lit []byte, fold, litOnly bool) {
	flags := syntax.Perl
	if foldCase {
		flags |= syntax.FoldCase
	}
	re, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, false, false
	}
	re = re.Simplify()
	runes, fold := required(re)
	if len(runes) == 0 {
		return nil, false, false
	}
	b := []byte(string(runes))
	if bytes.IndexByte(b, '\n') >= 0 {
		return nil, false, false
	}
	return b, fold, re.Op == syntax.OpLiteral
}

func required(re *syntax.Regexp) ([]rune, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return re.Rune, false
		}
		fold := false
		for _, r := range re.Rune {
			if unicode.SimpleFold(r) == r {
				continue
			}
			if r >= utf8.RuneSelf {
				return nil, false // non-ASCII folding: leave it to the regexp
			}
			fold = true
		}
		return re.Rune, fold
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []rune
		var bestFold bool
		for _, sub := range re.Sub {
			if r, f := required(sub); len(r) > len(best) {
				best, bestFold = r, f
			}
		}
		return best, bestFold
	}
	return nil, false
}

// exoticFolds lists the non-ASCII runes that Unicode case folding equates
// with ASCII letters of lit (K: KELVIN SIGN, s: LONG S), as UTF-8. A file
// that holds one is searched with the regexp alone.
func exoticFolds(lit []byte) [][]byte {
	var out [][]byte
	if bytes.ContainsAny(lit, "kK") {
		out = append(out, []byte("\u212A"))
	}
	if bytes.ContainsAny(lit, "sS") {
		out = append(out, []byte("\u017F"))
	}
	return out
}
