package jsonschema

import "testing"

func TestDecimalRoundTripsThroughString(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "-0.0": "0", "1.0": "1", "120": "120", "1e2": "100", "-2.50": "-2.5",
		"0.05": "0.05", "1e-9": "1e-9", "1.25e30": "1.25e30", "18446744073709551615": "18446744073709551615",
	} {
		d, ok := parseDecimal(in)
		if !ok || d.String() != want {
			t.Errorf("parseDecimal(%q) = %v, %v; want %s", in, d, ok, want)
		}
	}
}

func TestDecimalOrdersLikeNumbers(t *testing.T) {
	ordered := []string{"-1e400", "-18446744073709551616", "-2.5", "-2", "-1e-30", "0", "1e-400", "0.5", "1", "1.0000001", "10", "1e400"}
	for i, a := range ordered {
		for j, b := range ordered {
			da, _ := parseDecimal(a)
			db, _ := parseDecimal(b)
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := da.cmp(db); got != want {
				t.Errorf("cmp(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
}
