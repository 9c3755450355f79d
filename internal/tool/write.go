package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"
)

//go:embed write.md
var writeDescription string

// describeTimeout bounds the read a preview makes to show a diff: with an
// editor-backed FS the read is a round trip to the client.
const describeTimeout = 5 * time.Second

// Write creates or overwrites a file.
type Write struct{}

type writeInput struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (Write) Name() string        { return "write" }
func (Write) Description() string { return writeDescription }
func (Write) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path, absolute or relative to the working directory"},` +
		`"content":{"type":"string","description":"The complete new content of the file"}},` +
		`"required":["path","content"]}`)
}

func (Write) Describe(env *Env, raw json.RawMessage) Preview {
	var in writeInput
	looseDecode(raw, &in)
	p := env.Resolve(in.Path)
	pv := Preview{Kind: KindEdit, Title: "Write " + displayPath(env, p), Access: AccessWrite,
		Paths: []string{p}, Locations: []Location{{Path: p}}}
	ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
	defer cancel()
	old, err := currentText(ctx, env, p)
	if err == nil {
		pv.Content = []Content{diffContent(p, old, in.Content)}
	}
	return pv
}

func (Write) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in writeInput
	if r := decodeInput("write", call.Input, &in); r != nil {
		return *r, nil
	}
	if in.Path == "" {
		return ErrorResult(`write needs a "path"`), nil
	}
	p := env.Resolve(in.Path)
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return ErrorResult(fmt.Sprintf("%s is a directory", p)), nil
	}
	old, err := currentText(ctx, env, p)
	if err != nil {
		return fsFailure(ctx, "read", p, err)
	}
	if err := env.fs().WriteTextFile(ctx, p, in.Content); err != nil {
		return fsFailure(ctx, "write", p, err)
	}
	verb := "Overwrote"
	if old == nil {
		verb = "Created"
	}
	n := strings.Count(in.Content, "\n")
	if in.Content != "" && !strings.HasSuffix(in.Content, "\n") {
		n++
	}
	return Result{Output: fmt.Sprintf("%s %s (%d lines).", verb, p, n),
		Content:   []Content{diffContent(p, old, in.Content)},
		Locations: []Location{{Path: p, Line: 1}}}, nil
}

// currentText reads p through env's FS; nil when the file does not exist.
func currentText(ctx context.Context, env *Env, p string) (*string, error) {
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	s, err := env.fs().ReadTextFile(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// fsFailure turns a file-system error into a model-facing result, or into
// the context's error when the call was cancelled.
func fsFailure(ctx context.Context, op, p string, err error) (Result, error) {
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	if errors.Is(err, fs.ErrNotExist) {
		return ErrorResult(fmt.Sprintf("cannot %s %s: no such file or directory", op, p)), nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return ErrorResult(fmt.Sprintf("cannot %s %s: permission denied", op, p)), nil
	}
	return ErrorResult(fmt.Sprintf("cannot %s %s: %v", op, p, err)), nil
}
