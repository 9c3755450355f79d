package main

import (
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// kongACP parses args the way main does when parseACPArgs declines: kong
// over acpCLI.
func kongACP(t *testing.T, args []string) (*acpCmd, error) {
	t.Helper()
	var cli acpCLI
	p, err := kong.New(&cli, kong.Name("corvid"), kong.UsageOnError(), kong.Vars{"version": "x"},
		kong.Writers(io.Discard, io.Discard), kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Parse(args)
	return &cli.ACP, err
}

// sameAsKong fails unless kong reads args into exactly what got holds.
func sameAsKong(t *testing.T, args []string, got *acpCmd) {
	t.Helper()
	want, err := kongACP(t, args)
	if err != nil {
		t.Errorf("parseACPArgs accepted %q, which kong refuses: %v", args, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseACPArgs(%q) = %+v\nkong reads %+v", args, *got, *want)
	}
}

// acpFlagFields lists acpCmd's flags (embedded structs included) with a
// value kong accepts for each.
func acpFlagFields(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if _, ok := f.Tag.Lookup("embed"); ok {
				walk(f.Type)
				continue
			}
			name := f.Tag.Get("name")
			if name == "" {
				continue
			}
			var value string
			kind := f.Type.Kind()
			if kind == reflect.Pointer {
				kind = f.Type.Elem().Kind() // an optional value: nil when not given
			}
			switch kind {
			case reflect.Bool:
				out = append(out, []string{"--" + name})
				continue
			case reflect.Int:
				value = "7"
			case reflect.Slice:
				value = "shell(go test*),read"
			case reflect.String:
				value = "some value"
				for _, e := range strings.Split(f.Tag.Get("enum"), ",") {
					if e != "" {
						value = e
					}
				}
			default:
				t.Fatalf("flag --%s has a kind (%s) this test does not know", name, f.Type.Kind())
			}
			out = append(out, []string{"--" + name, value}, []string{"--" + name + "=" + value})
			if s := f.Tag.Get("short"); s != "" {
				out = append(out, []string{"-" + s, value})
			}
		}
	}
	walk(reflect.TypeFor[acpCmd]())
	return out
}

// Every flag of acpCmd is read by parseACPArgs as kong reads it: a flag
// added to acpCmd fails here until parseACPArgs knows it.
func TestACPArgsParseLikeKong(t *testing.T) {
	vectors := [][]string{
		{"acp"}, {"rpc"}, {"agent-client"},
		{"acp", "-m", "script:examples/hello.json"},
		{"acp", "--compat", "codebuddy"}, // what acpFlagArgs makes of `corvid --acp`
		{"acp", "--model", "anthropic:claude-sonnet-4-6", "--yolo", "--log-level=debug", "--allow", "write", "--allow", "shell(go test*)"},
		{"acp", "--max-line-bytes", "0"},
		{"acp", "--system", "a=b --yolo"},
	}
	for _, flag := range acpFlagFields(t) {
		vectors = append(vectors, append([]string{"acp"}, flag...))
	}
	if len(vectors) < 30 {
		t.Fatalf("only %d vectors: did the walk over acpCmd's flags find them?", len(vectors))
	}
	for _, args := range vectors {
		got, ok := parseACPArgs(args)
		if !ok {
			t.Errorf("parseACPArgs(%q) declined; it must read every acp flag (and kong reads this one)", args)
			continue
		}
		sameAsKong(t, args, got)
	}
}

// What parseACPArgs declines goes to kong: help, version, errors, and any
// form it does not read exactly as kong does.
func TestACPArgsDeclineToKong(t *testing.T) {
	for _, args := range [][]string{
		nil, {"run"}, {"acp", "--help"}, {"acp", "-h"}, {"acp", "--version"}, {"acp", "-v"},
		{"acp", "extra"}, {"acp", "--"}, {"acp", "--nope"}, {"acp", "-m"}, {"acp", "-mscript:x"},
		{"acp", "--model="}, {"acp", "--model", "-x"}, {"acp", "--yolo=true"}, {"acp", "--yolo", "--yolo"},
		{"acp", "-m", "a", "--model", "b"}, {"acp", "--client-tools", "sometimes"}, {"acp", "--compat", "zed"},
		{"acp", "--max-line-bytes", "010"}, {"acp", "--max-line-bytes", "0x10"}, {"acp", "--max-line-bytes", "1_000"},
		{"acp", "--max-depth", "-1"}, {"acp", "--max-line-bytes", "99999999999999999999"},
		{"--acp"}, {"--yolo", "acp"},
	} {
		if c, ok := parseACPArgs(args); ok {
			t.Errorf("parseACPArgs(%q) = %+v; it must leave this to kong", args, *c)
		}
	}
}

// Random command lines from words that tempt a hand-written parser: each
// one parseACPArgs accepts, kong reads the same.
func TestACPArgsRandomLinesLikeKong(t *testing.T) {
	words := []string{
		"-m", "--model", "--model=x", "script:a.json", "--yolo", "--yolo=false", "--", "-h", "--compat",
		"codebuddy", "--compat=", "--client-tools", "never", "auto", "--allow", "a,b", "--allow=read",
		"--max-line-bytes", "10", "010", "1e3", "--max-depth=2", "--log-level", "warn", "=", "-",
		"--system", "--system=--yolo", "acp", "--agent", "reviewer", "--no-seed-commands", "--login",
		"--mode", "plan", "--sandbox=read-only", "--sandbox-network", "--output-format", "json",
	}
	rng := rand.New(rand.NewPCG(18, 2026))
	accepted := 0
	for range 3000 {
		args := []string{"acp"}
		for range rng.IntN(6) {
			args = append(args, words[rng.IntN(len(words))])
		}
		if got, ok := parseACPArgs(args); ok {
			accepted++
			sameAsKong(t, args, got)
		}
	}
	if accepted < 300 {
		t.Errorf("parseACPArgs accepted only %d of 3000 random lines; the test says little", accepted)
	}
}
