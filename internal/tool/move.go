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
)

//go:embed move.md
var moveDescription string

// Move renames a file or directory.
type Move struct{}

type moveInput struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Overwrite   bool   `json:"overwrite,omitempty"`
}

func (Move) Name() string        { return "move" }
func (Move) Description() string { return moveDescription }
func (Move) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"source":{"type":"string","description":"Existing path"},` +
		`"destination":{"type":"string","description":"New path"},` +
		`"overwrite":{"type":"boolean","description":"Replace an existing destination file"}},` +
		`"required":["source","destination"]}`)
}

func (Move) Describe(env *Env, raw json.RawMessage) Preview {
	var in moveInput
	looseDecode(raw, &in)
	src, dst := env.Resolve(in.Source), env.Resolve(in.Destination)
	return Preview{Kind: KindMove, Title: "Move " + displayPath(env, src) + " → " + displayPath(env, dst),
		Access: AccessWrite, Paths: []string{src, dst}, Targets: writeTargets(src, dst),
		Locations: []Location{{Path: dst}}}
}

func (Move) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in moveInput
	if r := decodeInput("move", call.Input, &in); r != nil {
		return *r, nil
	}
	if in.Source == "" || in.Destination == "" {
		return ErrorResult(`move needs "source" and "destination"`), nil
	}
	src, dst := env.Resolve(in.Source), env.Resolve(in.Destination)
	for _, p := range []string{src, dst} {
		if msg := checkTarget(approvedTarget(call, p)); msg != "" {
			return ErrorResult(msg), nil
		}
	}
	if st, err := os.Lstat(src); err != nil {
		return fsFailure(ctx, "move", src, err)
	} else if special(st.Mode()) {
		return ErrorResult((&NotRegularError{Path: src, Mode: st.Mode()}).Error()), nil
	}
	if st, err := os.Lstat(dst); err == nil {
		if st.IsDir() {
			return ErrorResult(fmt.Sprintf("destination %s is an existing directory; name the new path in full", dst)), nil
		}
		if special(st.Mode()) {
			return ErrorResult((&NotRegularError{Path: dst, Mode: st.Mode()}).Error()), nil
		}
		if !in.Overwrite {
			return ErrorResult(fmt.Sprintf("destination %s exists; set overwrite to replace it", dst)), nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fsFailure(ctx, "move to", dst, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fsFailure(ctx, "create directory for", dst, err)
	}
	if err := os.Rename(src, dst); err != nil {
		return fsFailure(ctx, "move", src, err)
	}
	return Result{Output: fmt.Sprintf("Moved %s to %s.", src, dst), Locations: []Location{{Path: dst}}}, nil
}
