package acpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCountElementsCountsTopLevelEntriesOnly(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{``, 0}, {`null`, 0}, {`"x"`, 0}, {`{}`, 0}, {`[]`, 0}, {` [ ] `, 0},
		{`[1]`, 1}, {`[{}]`, 1}, {`[[]]`, 1}, {`[""]`, 1},
		{`[{"a":[1,2,3],"b":"x,y]"},{"c":"\"],["}, 3 ]`, 3},
		{`[` + strings.Repeat(`{"type":"text","text":"a,b"},`, 999) + `{}]`, 1000},
	} {
		if got := countElements([]byte(c.in)); got != c.want {
			t.Errorf("countElements(%.60s) = %d, want %d", c.in, got, c.want)
		}
		if c.in != "" && json.Valid([]byte(c.in)) == false {
			t.Errorf("case %.40s is not valid JSON", c.in)
		}
	}
}
