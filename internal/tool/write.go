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
		Paths: []string{p}, Locations: []Location{{Path: p}}, Targets: writeTargets(p)}
	ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
	defer cancel()
	old, note := previewOld(ctx, env, p)
	if note != "" {
		pv.Content = []Content{noteContent(note), noteContent(fmt.Sprintf("New content (%s):\n%s", byteSize(int64(len(in.Content))), capTail(in.Content, maxPreviewBytes)))}
		return pv
	}
	pv.Content = changeContent(p, old, in.Content)
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
	want := approvedTarget(call, p)
	if msg := checkTarget(want); msg != "" {
		return ErrorResult(msg), nil
	}
	if st, err := os.Stat(want.Real); err == nil && st.IsDir() {
		return ErrorResult(fmt.Sprintf("%s is a directory", p)), nil
	} else if err == nil && !st.Mode().IsRegular() {
		return ErrorResult((&NotRegularError{Path: p, Mode: st.Mode()}).Error()), nil
	}
	// The old text only feeds the diff the user sees: small files only.
	old, note := previewOld(ctx, env, p)
	if err := writeTarget(ctx, env, want, in.Content); err != nil {
		return fsFailure(ctx, "write", p, err)
	}
	verb := "Overwrote"
	if !want.Exists {
		verb = "Created"
	}
	n := strings.Count(in.Content, "\n")
	if in.Content != "" && !strings.HasSuffix(in.Content, "\n") {
		n++
	}
	content := changeContent(p, old, in.Content)
	if note != "" {
		content = []Content{noteContent(fmt.Sprintf("Wrote %s to %s.", byteSize(int64(len(in.Content))), p))}
	}
	return Result{Output: fmt.Sprintf("%s %s (%d lines).", verb, p, n),
		Content:   content,
		Locations: []Location{{Path: p, Line: 1}}}, nil
}

// writeTarget writes content to the file the question showed (want): through
// a TargetWriter when the FS is one, which refuses a changed target and
// writes atomically; else through the FS's plain write.
func writeTarget(ctx context.Context, env *Env, want Target, content string) error {
	if tw, ok := env.fs().(TargetWriter); ok {
		return tw.WriteTarget(ctx, want, content)
	}
	return env.fs().WriteTextFile(ctx, want.Path, content)
}

// currentText reads p through env's FS; nil when the file does not exist.
// FIFOs, devices and sockets are refused before anything opens them.
func currentText(ctx context.Context, env *Env, p string) (*string, error) {
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		if !st.Mode().IsRegular() && !st.IsDir() {
			return nil, &NotRegularError{Path: p, Mode: st.Mode()}
		}
		if st.Size() > maxTextFile {
			return nil, &TooLargeError{Path: p, Size: st.Size(), Limit: maxTextFile}
		}
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
	var nr *NotRegularError
	var tl *TooLargeError
	switch {
	case errors.As(err, &nr), errors.As(err, &tl):
		return ErrorResult(fmt.Sprintf("cannot %s %s: %v", op, p, err)), nil
	case errors.Is(err, ErrTargetChanged):
		return ErrorResult(fmt.Sprintf("cannot %s %s: it changed since permission was asked (a link or file was swapped); nothing was written", op, p)), nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return ErrorResult(fmt.Sprintf("cannot %s %s: permission denied", op, p)), nil
	}
	return ErrorResult(fmt.Sprintf("cannot %s %s: %v", op, p, err)), nil
}
