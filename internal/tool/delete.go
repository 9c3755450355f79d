package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
)

//go:embed delete.md
var deleteDescription string

// Delete removes a file or directory.
type Delete struct{}

type deleteInput struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive,omitempty"`
}

// maxDiffPreview bounds the file size whose content is shown as a diff.
const maxDiffPreview = 256 << 10

func (Delete) Name() string        { return "delete" }
func (Delete) Description() string { return deleteDescription }
func (Delete) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File or directory path"},` +
		`"recursive":{"type":"boolean","description":"Delete a directory and everything in it"}},` +
		`"required":["path"]}`)
}

func (Delete) Describe(env *Env, raw json.RawMessage) Preview {
	var in deleteInput
	looseDecode(raw, &in)
	p := env.Resolve(in.Path)
	pv := Preview{Kind: KindDelete, Title: "Delete " + displayPath(env, p), Access: AccessWrite,
		Paths: []string{p}, Locations: []Location{{Path: p}}, Targets: writeTargets(p)}
	st, err := os.Lstat(p)
	switch {
	case err != nil || !st.Mode().IsRegular():
	case !env.InRoots(p):
		pv.Content = []Content{noteContent(fmt.Sprintf("%s is outside the workspace (%s); its content is not shown.", p, byteSize(st.Size())))}
	case st.Size() <= maxDiffPreview:
		if b, err := readRegular(p, maxDiffPreview); err == nil && isText(b) {
			old := string(b)
			pv.Content = []Content{diffContent(p, &old, "")}
		}
	default:
		pv.Content = []Content{noteContent(fmt.Sprintf("Delete %s (%s).", p, byteSize(st.Size())))}
	}
	return pv
}

func (Delete) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in deleteInput
	if r := decodeInput("delete", call.Input, &in); r != nil {
		return *r, nil
	}
	if in.Path == "" {
		return ErrorResult(`delete needs a "path"`), nil
	}
	p := env.Resolve(in.Path)
	for _, root := range env.Roots {
		if p == env.Resolve(root) {
			return ErrorResult(fmt.Sprintf("refusing to delete the workspace root %s", p)), nil
		}
	}
	if msg := checkTarget(approvedTarget(call, p)); msg != "" {
		return ErrorResult(msg), nil
	}
	st, err := os.Lstat(p)
	if err != nil {
		return fsFailure(ctx, "delete", p, err)
	}
	if special(st.Mode()) {
		return ErrorResult((&NotRegularError{Path: p, Mode: st.Mode()}).Error()), nil
	}
	if st.IsDir() && !in.Recursive {
		if err := os.Remove(p); err != nil {
			return ErrorResult(fmt.Sprintf("%s is a non-empty directory; set recursive to delete it and its contents", p)), nil
		}
		return Result{Output: fmt.Sprintf("Deleted empty directory %s.", p)}, nil
	}
	if st.IsDir() {
		err = os.RemoveAll(p)
	} else {
		err = os.Remove(p)
	}
	if err != nil {
		return fsFailure(ctx, "delete", p, err)
	}
	return Result{Output: fmt.Sprintf("Deleted %s.", p)}, nil
}
