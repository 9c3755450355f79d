package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
)

//go:embed ls.md
var lsDescription string

// maxListEntries caps ls output.
const maxListEntries = 1000

// List lists a directory (the "ls" tool).
type List struct{}

type lsInput struct {
	Path  string `json:"path,omitempty"`
	Depth int    `json:"depth,omitempty"`
}

func (List) Name() string        { return "ls" }
func (List) Description() string { return lsDescription }
func (List) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Directory (default: the working directory)"},` +
		`"depth":{"type":"integer","description":"Levels to descend (1-5, default 1)"}}}`)
}

func (List) Describe(env *Env, raw json.RawMessage) Preview {
	var in lsInput
	looseDecode(raw, &in)
	p := env.Resolve(in.Path)
	return Preview{Kind: KindRead, Title: "List " + displayDir(env, p), Access: AccessRead,
		Paths: []string{p}, Locations: []Location{{Path: p}}}
}

func (List) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in lsInput
	if r := decodeInput("ls", call.Input, &in); r != nil {
		return *r, nil
	}
	p := env.Resolve(in.Path)
	st, err := os.Stat(p)
	if err != nil {
		return fsFailure(ctx, "list", p, err)
	}
	if !st.IsDir() {
		return ErrorResult(fmt.Sprintf("%s is a file, not a directory", p)), nil
	}
	depth := min(max(in.Depth, 1), 5)
	var mu sync.Mutex
	var lines []string
	more := false
	visit := func(path, rel string, d fs.DirEntry) bool {
		name := rel
		switch {
		case d.IsDir():
			name += "/"
		case d.Type()&fs.ModeSymlink != 0:
			name += "@"
		}
		mu.Lock()
		defer mu.Unlock()
		if len(lines) >= maxListEntries {
			more = true
			return false
		}
		lines = append(lines, name)
		return true
	}
	if depth == 1 {
		entries, err := os.ReadDir(p)
		if err != nil {
			return fsFailure(ctx, "list", p, err)
		}
		for _, e := range entries {
			if !visit("", e.Name(), e) {
				break
			}
		}
	} else if err := walkTree(ctx, p, walkOptions{ignore: true, maxDepth: depth}, visit); err != nil {
		return Result{}, err
	}
	sort.Strings(lines)
	out := strings.Join(lines, "\n")
	switch {
	case len(lines) == 0:
		out = "(empty directory)"
	case more:
		out += fmt.Sprintf("\n… (stopped at %d entries; list a subdirectory or use glob)", maxListEntries)
	}
	return Result{Output: out, Locations: []Location{{Path: p}}}, nil
}

// displayDir is displayPath for a directory, "." for the cwd itself.
func displayDir(env *Env, p string) string {
	if d := displayPath(env, p); d != "" {
		return d
	}
	return "."
}
