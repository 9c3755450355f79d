package jsonschema

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// decimal is an exact JSON number: (-1 if neg) × 0.digits × 10^exp.
//
// Invariants: digits has no leading or trailing '0'; zero is digits == "" (and neg false).
// Exact arithmetic on the text keeps big integers and huge exponents (1e400) exact and
// cheap, which a float64 or a big.Rat (whose SetString refuses exponents above 10^6) would not.
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxExp bounds the parsed exponent so the arithmetic below cannot overflow; any number
// that large is far outside every bound a schema can state in fewer than 2^40 digits.
const maxExp = 1 << 40

// parseDecimal reads a JSON number (the grammar json.Decoder enforces). ok is false for text
// outside that grammar, which only a schema written by hand could contain.
func parseDecimal(s string) (d decimal, ok bool) {
	if strings.HasPrefix(s, "-") {
		d.neg = true
		s = s[1:]
	}
	mant, expText, hasExp := strings.Cut(strings.ReplaceAll(s, "E", "e"), "e")
	intPart, fracPart, _ := strings.Cut(mant, ".")
	if intPart == "" || !allDigits(intPart) || !allDigits(fracPart) {
		return decimal{}, false
	}
	var e int64
	if hasExp {
		neg := false
		switch {
		case strings.HasPrefix(expText, "-"):
			neg, expText = true, expText[1:]
		case strings.HasPrefix(expText, "+"):
			expText = expText[1:]
		}
		if expText == "" || !allDigits(expText) {
			return decimal{}, false
		}
		for i := 0; i < len(expText) && e < maxExp; i++ {
			e = e*10 + int64(expText[i]-'0')
		}
		e = min(e, maxExp)
		if neg {
			e = -e
		}
	}
	all := intPart + fracPart
	point := int64(len(intPart))
	trimmed := strings.TrimLeft(all, "0")
	point -= int64(len(all) - len(trimmed))
	trimmed = strings.TrimRight(trimmed, "0")
	if trimmed == "" {
		return decimal{}, true
	}
	d.digits = trimmed
	d.exp = point + e
	return d, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isInteger reports whether d has no fractional part (2020-12: 1.0 and 1e2 are integers).
func (d decimal) isInteger() bool {
	return d.digits == "" || d.exp >= int64(len(d.digits))
}

// cmp returns -1, 0 or +1 as d is less than, equal to or greater than o.
func (d decimal) cmp(o decimal) int {
	sign := func(x decimal) int {
		switch {
		case x.digits == "":
			return 0
		case x.neg:
			return -1
		}
		return 1
	}
	sd, so := sign(d), sign(o)
	if sd != so {
		if sd < so {
			return -1
		}
		return 1
	}
	if sd == 0 {
		return 0
	}
	// Same sign: compare magnitudes, then flip for negatives.
	m := 0
	switch {
	case d.exp != o.exp:
		m = 1
		if d.exp < o.exp {
			m = -1
		}
	default:
		// No trailing zeros, so plain string order is numeric order here.
		m = strings.Compare(d.digits, o.digits)
	}
	if sd < 0 {
		m = -m
	}
	return m
}

// numericFormat is a `format` whose range this package asserts.
type numericFormat struct {
	name     string
	integer  bool
	min, max decimal
}

func mustDecimal(s string) decimal {
	d, ok := parseDecimal(s)
	if !ok {
		panic("jsonschema: bad decimal constant " + s)
	}
	return d
}

// lookupNumericFormat returns the range check for a numeric format name used by the ACP
// schema (Rust's serde/schemars names), or false for any other format, which is an annotation.
func lookupNumericFormat(name string) (*numericFormat, bool) {
	var lo, hi string
	switch name {
	case "int8":
		lo, hi = "-128", "127"
	case "uint8":
		lo, hi = "0", "255"
	case "int16":
		lo, hi = "-32768", "32767"
	case "uint16":
		lo, hi = "0", "65535"
	case "int32":
		lo, hi = "-2147483648", "2147483647"
	case "uint32":
		lo, hi = "0", "4294967295"
	case "int64":
		lo, hi = "-9223372036854775808", "9223372036854775807"
	case "uint64":
		lo, hi = "0", "18446744073709551615"
	case "double":
		return &numericFormat{name: name}, true
	default:
		return nil, false
	}
	return &numericFormat{name: name, integer: true, min: mustDecimal(lo), max: mustDecimal(hi)}, true
}

// check reports whether the number text n (already known to be a number) is in f's range.
func (f *numericFormat) check(n json.Number, d decimal) bool {
	if !f.integer {
		// double: anything that is finite as a float64 (Rust's f64 rejects 1e400).
		v, err := strconv.ParseFloat(string(n), 64)
		return err == nil || !math.IsInf(v, 0)
	}
	return d.isInteger() && d.cmp(f.min) >= 0 && d.cmp(f.max) <= 0
}
