package tool

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/llm"
)

//go:embed read.md
var readDescription string

const (
	// maxReadBytes caps what read returns to the model.
	maxReadBytes = 256 << 10
	// maxReadFile is the largest file read will load at all.
	maxReadFile = 16 << 20
	// maxImageBytes is the largest image read passes to the model.
	maxImageBytes = 5 << 20
	// maxLineRunes cuts very long lines (minified code, data).
	maxLineRunes     = 2000
	defaultReadLimit = 2000
)

// Read reads a text file, or an image when the model accepts images.
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
	looseDecode(raw, &in)
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
	if r := decodeInput("read", call.Input, &in); r != nil {
		return *r, nil
	}
	if in.Path == "" {
		return ErrorResult(`read needs a "path" string argument`), nil
	}
	if in.Offset < 0 || in.Limit < 0 {
		return ErrorResult("offset and limit must not be negative"), nil
	}
	p := env.Resolve(in.Path)
	st, err := os.Stat(p)
	if err == nil {
		if st.IsDir() {
			return ErrorResult(fmt.Sprintf("%s is a directory, not a file; use ls to list it", p)), nil
		}
		if st.Size() > maxReadFile {
			return ErrorResult(fmt.Sprintf("%s is too large to read (%d MiB); use grep to find what you need", p, st.Size()>>20)), nil
		}
		if mime := imageType(p); mime != "" {
			return readImage(env, p, mime, st.Size())
		}
	}
	text, err := env.fs().ReadTextFile(ctx, p)
	if err != nil {
		return fsFailure(ctx, "read", p, err)
	}
	if !isText([]byte(text[:min(len(text), 8192)])) {
		return ErrorResult(fmt.Sprintf("%s looks like a binary file; read only returns text", p)), nil
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if text == "" {
		return Result{Output: fmt.Sprintf("(%s is empty)", p), Locations: []Location{{Path: p}}}, nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start := max(in.Offset, 1)
	if start > len(lines) {
		return ErrorResult(fmt.Sprintf("offset %d is past the end of %s (%d lines)", start, p, len(lines))), nil
	}
	limit := in.Limit
	if limit <= 0 {
		limit = defaultReadLimit
	}
	end := min(start-1+limit, len(lines))
	var b strings.Builder
	for i := start - 1; i < end; i++ {
		if b.Len() > maxReadBytes {
			fmt.Fprintf(&b, "… (output truncated before line %d of %d; read on with offset %d)\n", i+1, len(lines), i+1)
			break
		}
		line := strings.TrimRight(lines[i], "\r\n")
		if utf8.RuneCountInString(line) > maxLineRunes {
			line = shorten(line, maxLineRunes) + " (line truncated)"
		}
		fmt.Fprintf(&b, "%d\t%s\n", i+1, line)
	}
	if end < len(lines) && b.Len() <= maxReadBytes {
		fmt.Fprintf(&b, "… (%d more lines; read on with offset %d)\n", len(lines)-end, end+1)
	}
	out := b.String()
	return Result{Output: out, Content: []Content{{Type: ContentText, Text: "```\n" + out + "```"}},
		Locations: []Location{{Path: p, Line: start}}}, nil
}

func readImage(env *Env, p, mime string, size int64) (Result, error) {
	if !env.Images {
		return ErrorResult(fmt.Sprintf("%s is an image (%s) and this model does not accept images", p, mime)), nil
	}
	if size > maxImageBytes {
		return ErrorResult(fmt.Sprintf("%s is an image too large to pass on (%d MiB, limit %d MiB)", p, size>>20, maxImageBytes>>20)), nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return ErrorResult(fmt.Sprintf("cannot read %s: %v", p, err)), nil
	}
	if got := http.DetectContentType(data); got != mime {
		return ErrorResult(fmt.Sprintf("%s has an image extension but its content is %s", p, got)), nil
	}
	return Result{
		Output:    fmt.Sprintf("Image %s (%s, %d bytes).", p, mime, len(data)),
		Images:    []llm.Part{{Type: llm.PartImage, MimeType: mime, Data: data}},
		Content:   []Content{{Type: ContentImage, MimeType: mime, Data: data}},
		Locations: []Location{{Path: p}},
	}, nil
}

// imageType is the MIME type of an image file models commonly accept, by
// extension; "" for anything else.
func imageType(p string) string {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	}
	return ""
}

// isText reports whether a file's leading bytes look like text: no NUL
// byte (the test git and ripgrep use).
func isText(head []byte) bool {
	return bytes.IndexByte(head, 0) < 0
}

// displayPath shows p relative to the cwd when it lies inside it.
func displayPath(env *Env, p string) string {
	if rel, err := filepath.Rel(env.Cwd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return p
}
