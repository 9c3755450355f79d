package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

//go:embed read.md
var readDescription string

// maxReadBytes caps what read returns to the model.
const maxReadBytes = 256 << 10

// Read reads a text file.
type Read struct{}

type readInput struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

func (Read) Name() string        { return "read" }
func (Read) Description() string { return readDescription }
func (Read) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File path, absolute or relative to the working directory"},"offset":{"type":"integer","description":"First line (1-based)"},"limit":{"type":"integer","description":"Number of lines"}},"required":["path"]}`)
}

func (Read) Describe(env *Env, raw json.RawMessage) Preview {
	var in readInput
	_ = json.Unmarshal(raw, &in)
	p := env.Resolve(in.Path)
	title := "Read " + displayPath(env, p)
	if in.Offset > 0 || in.Limit > 0 {
		start := max(in.Offset, 1)
		if in.Limit > 0 {
			title += fmt.Sprintf(":%d-%d", start, start+in.Limit-1)
		} else {
			title += fmt.Sprintf(":%d", start)
		}
	}
	return Preview{Kind: KindRead, Title: title, Access: AccessRead, Paths: []string{p},
		Locations: []Location{{Path: p, Line: max(in.Offset, 0)}}}
}

func (Read) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in readInput
	if err := json.Unmarshal(call.Input, &in); err != nil || in.Path == "" {
		return ErrorResult("read needs a \"path\" string argument"), nil
	}
	p := env.Resolve(in.Path)
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return ErrorResult(fmt.Sprintf("%s is a directory, not a file", p)), nil
	}
	text, err := env.FS.ReadTextFile(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		if errors.Is(err, fs.ErrNotExist) {
			return ErrorResult(fmt.Sprintf("file not found: %s", p)), nil
		}
		return ErrorResult(fmt.Sprintf("cannot read %s: %v", p, err)), nil
	}
	if !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0 {
		return ErrorResult(fmt.Sprintf("%s looks like a binary file; read only returns text", p)), nil
	}
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start := max(in.Offset, 1)
	limit := in.Limit
	if limit <= 0 {
		limit = 2000
	}
	var b strings.Builder
	end := min(start-1+limit, len(lines))
	for i := start - 1; i < end; i++ {
		if b.Len() > maxReadBytes {
			fmt.Fprintf(&b, "… (output truncated at line %d of %d; use offset to read on)\n", i, len(lines))
			break
		}
		fmt.Fprintf(&b, "%d\t%s", i+1, strings.TrimSuffix(lines[i], "\n"))
		b.WriteByte('\n')
	}
	if start-1 >= len(lines) && len(lines) > 0 {
		return ErrorResult(fmt.Sprintf("offset %d is past the end of %s (%d lines)", start, p, len(lines))), nil
	}
	out := b.String()
	return Result{Output: out, Content: []Content{{Type: ContentText, Text: "```\n" + out + "```"}},
		Locations: []Location{{Path: p, Line: start}}}, nil
}

// displayPath shows p relative to the cwd when it lies inside it.
func displayPath(env *Env, p string) string {
	if rel, err := filepath.Rel(env.Cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}
