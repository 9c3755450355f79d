package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Package initialisation budget of `corvid acp` (issue 18: nothing is
// initialised at start that the acp path does not use). The Go runtime
// reports every package init with GODEBUG=inittrace=1; heap bytes and
// allocation counts are the same run after run, unlike clock time on a
// shared machine, so they carry the budget.
//
// Measured 2026-12-01 on the built binary: 666 KB in 4,528 allocations
// across 177 packages while the Anthropic and OpenAI SDKs were linked; with
// both gone, 276 KB in 2,160 allocations across 138 packages (the MCP SDK's
// JSON Schema package 81 KB and encoding/gob 27 KB of it). With corvid's
// own MCP client instead of the go-sdk's: 195 KB in 1,802 allocations
// across 131 packages. 2026-12-02, with the permission and conformance
// tables built on first use and config's name check a loop instead of a
// regexp: 153 KB in 1,285 allocations across 127 packages, of which corvid's
// own packages are 14 KB; the rest is the standard library and the
// dependencies (go.yaml.in/yaml/v4 25 KB, mvdan.cc/sh fileutil 15 KB,
// starlark 11 KB, go-humanize 9.5 KB: regexps and tables they build in
// init). The budget keeps about 25% of headroom over that. 2026-12-07,
// go.yaml.in/yaml/v4 v4.0.0-rc.2 → v4.0.0 (its libyaml and plugin packages
// now init separately): 175 KB in 1,528 allocations across 131 packages,
// yaml 45.6 KB and 489 allocations of it, so little headroom is left in
// allocations.
const (
	initBudgetBytes  = 192 << 10
	initBudgetAllocs = 1600
)

// neverInitialised are packages the acp path must not link at all: their
// init would run on every start for a feature few sessions use.
var neverInitialised = []string{
	"golang.org/x/net/html",                      // fetch converts HTML with its own tokenizer
	"github.com/modelcontextprotocol/go-sdk/mcp", // corvid's MCP client is its own (internal/mcp)
	"github.com/google/jsonschema-go/jsonschema", // came with the MCP go-sdk
	"charm.land/bubbletea/v2",                    // the terminal UI is corvid-tui, a program of its own (#36)
	"charm.land/lipgloss/v2",
	"github.com/jackc/pgx/v5/pgtype", // the PostgreSQL driver is corvid-pg's alone (-tags corvid_pg, pghandoff.go)
	"github.com/jackc/pgx/v5",
}

// initLine is one `init PKG @T ms, C ms clock, B bytes, A allocs` line.
type initLine struct {
	pkg           string
	bytes, allocs int
}

func parseInitTrace(t *testing.T, stderr []byte) []initLine {
	t.Helper()
	var out []initLine
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," || !strings.HasPrefix(f[10], "allocs") {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("unreadable inittrace line %q", sc.Text())
		}
		out = append(out, initLine{pkg: f[1], bytes: b, allocs: a})
	}
	return out
}

// runInitTrace runs `corvid acp </dev/null` with env (which sets
// GODEBUG=inittrace=1) and returns its init lines, in order, and its stderr.
func runInitTrace(t *testing.T, bin string, env []string) ([]initLine, string) {
	t.Helper()
	cmd := exec.Command(bin, "acp")
	cmd.Env = env
	cmd.Stdin = strings.NewReader("")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("corvid acp </dev/null: %v\n%s", err, stderr.String())
	}
	return parseInitTrace(t, stderr.Bytes()), stderr.String()
}

func TestACPStartInitialisesWithinBudget(t *testing.T) {
	bin := testkit.BuildCorvid(t)
	env, _ := testkit.IsolatedEnv(t, "GODEBUG=inittrace=1")
	var best []initLine
	bestBytes := -1
	for range 3 { // the least of three: a stray allocation is not the binary's
		lines, stderr := runInitTrace(t, bin, env)
		if len(lines) < 20 {
			t.Fatalf("inittrace printed %d init lines; is GODEBUG passed on?\n%s", len(lines), stderr)
		}
		total := 0
		for _, l := range lines {
			total += l.bytes
		}
		if bestBytes < 0 || total < bestBytes {
			best, bestBytes = lines, total
		}
	}
	allocs := 0
	for _, l := range best {
		allocs += l.allocs
		for _, p := range neverInitialised {
			if l.pkg == p {
				t.Errorf("%s is initialised at start (%d bytes); the acp path must not link it", p, l.bytes)
			}
		}
	}
	t.Logf("package init: %d packages, %d bytes, %d allocs (budget %d bytes, %d allocs)", len(best), bestBytes, allocs, initBudgetBytes, initBudgetAllocs)
	if bestBytes > initBudgetBytes || allocs > initBudgetAllocs {
		sort.Slice(best, func(i, j int) bool { return best[i].bytes > best[j].bytes })
		var top strings.Builder
		for _, l := range best[:min(15, len(best))] {
			fmt.Fprintf(&top, "\n  %8d bytes %5d allocs  %s", l.bytes, l.allocs, l.pkg)
		}
		t.Errorf("package init allocates %d bytes in %d allocs, over the budget of %d bytes, %d allocs; the largest:%s",
			bestBytes, allocs, initBudgetBytes, initBudgetAllocs, top.String())
	}
}
