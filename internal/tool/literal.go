package tool

import "bytes"

// literalFinder finds a literal by scanning (with the vectorised
// bytes.IndexByte) for its rarest byte in typical source text and checking
// the bytes around each hit. Scanning for a common first byte, as
// bytes.Index does, stops far more often: "e" or "c" are everywhere in code,
// "N" or "_" are not.
//
// A folding finder matches ASCII letters of either case: it scans for both
// cases of its rare byte and compares with bytes.EqualFold.
type literalFinder struct {
	lit     []byte
	rare    byte
	rareAlt byte // the other case of rare, for a folding finder; else rare
	off     int  // index of rare in lit
	fold    bool
}

// byteCommonness orders bytes from most to least common in source code;
// bytes it leaves out count as rarest.
const byteCommonness = " \n\t" + "etaoinsrlcdhu" + "mpfgbyx().,;_=\"'" +
	"wvk:{}[]/*-0123456789" + "ESTRANICOLDPMF" + "#<>&|!+$@%^~`?\\" +
	"qjzBGHUVWKXYJQZ"

var byteRank = func() (r [256]int) {
	for i := range len(byteCommonness) {
		r[byteCommonness[i]] = len(byteCommonness) - i
	}
	return r
}()

func newLiteralFinder(lit []byte, fold bool) literalFinder {
	f := literalFinder{lit: lit, fold: fold}
	best := 0
	for i, c := range lit {
		rank := byteRank[c]
		if fold {
			rank += byteRank[otherCase(c)]
		}
		if i == 0 || rank < best {
			f.rare, f.off, best = c, i, rank
		}
	}
	f.rareAlt = f.rare
	if fold {
		f.rareAlt = otherCase(f.rare)
	}
	return f
}

// otherCase swaps the case of an ASCII letter.
func otherCase(c byte) byte {
	switch {
	case 'a' <= c && c <= 'z':
		return c - 'a' + 'A'
	case 'A' <= c && c <= 'Z':
		return c - 'A' + 'a'
	}
	return c
}

// index returns the offset of the first occurrence of the literal in data,
// or -1.
func (f literalFinder) index(data []byte) int {
	if f.fold {
		return f.indexFold(data)
	}
	n := len(f.lit)
	for pos := 0; pos+n <= len(data); {
		i := bytes.IndexByte(data[pos+f.off:len(data)-n+f.off+1], f.rare)
		if i < 0 {
			return -1
		}
		start := pos + i
		if bytes.Equal(data[start:start+n], f.lit) {
			return start
		}
		pos = start + 1
	}
	return -1
}

func (f literalFinder) indexFold(data []byte) int {
	n := len(f.lit)
	end := len(data) - n + f.off + 1 // rare bytes at or past end cannot start a match
	nextA, nextB := -1, -1           // cached positions of rare and rareAlt; end = none
	for p := f.off; p < end; {
		if nextA < p {
			nextA = end
			if i := bytes.IndexByte(data[p:end], f.rare); i >= 0 {
				nextA = p + i
			}
		}
		if nextB < p {
			nextB = end
			if i := bytes.IndexByte(data[p:end], f.rareAlt); i >= 0 {
				nextB = p + i
			}
		}
		at := min(nextA, nextB)
		if at >= end {
			return -1
		}
		start := at - f.off
		if bytes.EqualFold(data[start:start+n], f.lit) {
			return start
		}
		p = at + 1
	}
	return -1
}
