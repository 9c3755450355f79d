package tool

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestGrepMatchesRipgrepOnModuleCache holds the grep tool's file list to
// ripgrep's on real code, the Go module cache (thousands of packages, many
// .gitignore files, zip archives). ripgrep runs with the options that give
// corvid's rules: hidden files searched, .gitignore honoured outside a git
// repository too, no global or .ignore files. It skips when rg is not
// installed (apt-get install ripgrep).
func TestGrepMatchesRipgrepOnModuleCache(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("ripgrep (rg) is not installed; apt-get install ripgrep to compare with it")
	}
	if testing.Short() {
		t.Skip("searches the whole module cache")
	}
	dir := modCache(t)
	env := &Env{Cwd: dir, Roots: []string{dir}}
	for _, c := range modCachePatterns {
		args := []string{"--files-with-matches", "--hidden", "--no-require-git", "--no-ignore-global",
			"--no-ignore-dot", "--no-ignore-parent", "--no-messages"}
		if c.fold {
			args = append(args, "--ignore-case")
		}
		cmd := exec.Command(rg, append(args, "--", c.pattern, ".")...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil && len(out) > 0 {
			t.Fatalf("rg %s: %v", c.pattern, err)
		}
		var want []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" {
				want = append(want, strings.TrimPrefix(l, "./"))
			}
		}
		in := mustJSON(t, map[string]any{"pattern": c.pattern, "mode": "files", "max_results": maxGrepResults, "ignore_case": c.fold})
		res, err := Grep{}.Run(context.Background(), env, Call{Input: in})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", c.pattern, err, res.Output)
		}
		var got []string
		for _, l := range strings.Split(res.Output, "\n") {
			if l == "" || strings.HasPrefix(l, "No matches") || strings.HasPrefix(l, "Not searched:") {
				break
			}
			got = append(got, l)
		}
		if len(want) >= maxGrepResults {
			t.Fatalf("%s: %d files match, over the tool's cap; pick a rarer pattern", c.pattern, len(want))
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			var only []string
			for _, p := range got {
				if _, ok := slices.BinarySearch(want, p); !ok {
					only = append(only, "corvid only: "+p)
				}
			}
			for _, p := range want {
				if _, ok := slices.BinarySearch(got, p); !ok {
					only = append(only, "rg only: "+p)
				}
			}
			t.Errorf("%s: corvid found %d files, rg %d:\n%s", c.pattern, len(got), len(want), strings.Join(only[:min(len(only), 20)], "\n"))
		} else {
			t.Logf("%s: %d files, the same as rg", c.pattern, len(got))
		}
	}
}
