package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// Every command and alias of the CLI is a command word, so printModeArgs
// never reads a subcommand's own -p as print mode.
func TestCommandWordsNameEveryCommand(t *testing.T) {
	var cli CLI
	p, err := kong.New(&cli, kong.Name("corvid"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Model.Children {
		for _, name := range append([]string{n.Name}, n.Aliases...) {
			if !commandWords[name] {
				t.Errorf("command %q is missing from commandWords", name)
			}
		}
	}
}

// What follows "--" is another program's command line: no rewrite touches
// it, whatever it holds (--acp, -p, help).
func TestArgumentsAfterTheSeparatorAreUntouched(t *testing.T) {
	for _, line := range []string{
		"conformance -- gemini --acp",
		"conformance --scripted -- gemini --acp -p hi",
		"conformance -- help",
		"sandbox-exec -- sh -p -c true",
		"sandbox-exec --acp-like -- sh --acp",
	} {
		in := strings.Fields(line)
		got := helpArgs(printModeArgs(acpFlagArgs(in)))
		if !slices.Equal(got, in) {
			t.Errorf("%q was rewritten to %q", line, strings.Join(got, " "))
		}
	}
}
