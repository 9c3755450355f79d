package main

import (
	"slices"
	"testing"
)

func TestPrintModeArgsSelectRunBeforeACommandWord(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"-p", "hi"}, []string{"run", "-p", "hi"}},
		{[]string{"-m", "script:x.json", "-p", "hi"}, []string{"run", "-m", "script:x.json", "-p", "hi"}},
		{[]string{"--print", "hi"}, []string{"run", "--print", "hi"}},
		{[]string{"run", "-p", "hi"}, []string{"run", "-p", "hi"}},
		{[]string{"acp", "--system", "-p"}, []string{"acp", "--system", "-p"}},
		{[]string{"sessions", "list"}, []string{"sessions", "list"}},
	} {
		if got := printModeArgs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("printModeArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
