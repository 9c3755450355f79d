package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

//go:embed edit.md
var editDescription string

// Edit replaces exact text in a file; several edits in one call apply
// atomically (all or none).
type Edit struct{}

type editOp struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

type editInput struct {
	Path string `json:"path"`
	editOp
	Edits []editOp `json:"edits,omitempty"`
}

func (in editInput) ops() []editOp {
	if len(in.Edits) > 0 {
		return in.Edits
	}
	return []editOp{in.editOp}
}

const editOpSchema = `"old_string":{"type":"string","description":"Exact text to replace"},` +
	`"new_string":{"type":"string","description":"Replacement text"},` +
	`"replace_all":{"type":"boolean","description":"Replace every occurrence (default: old_string must be unique)"}`

func (Edit) Name() string        { return "edit" }
func (Edit) Description() string { return editDescription }
func (Edit) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path, absolute or relative to the working directory"},` +
		editOpSchema + `,` +
		`"edits":{"type":"array","description":"Several replacements applied in order, all or none","items":{"type":"object","properties":{` +
		editOpSchema + `},"required":["old_string","new_string"]}}},` +
		`"required":["path"]}`)
}

func (Edit) Describe(env *Env, raw json.RawMessage) Preview {
	var in editInput
	looseDecode(raw, &in)
	p := env.Resolve(in.Path)
	pv := Preview{Kind: KindEdit, Title: "Edit " + displayPath(env, p), Access: AccessWrite,
		Paths: []string{p}, Locations: []Location{{Path: p}}, Targets: writeTargets(p)}
	ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
	defer cancel()
	old, note := previewOld(ctx, env, p)
	if note != "" {
		pv.Content = []Content{noteContent(note)}
		for _, op := range in.ops() {
			pv.Content = append(pv.Content, noteContent(fmt.Sprintf("Replace:\n%s\nwith:\n%s",
				capTail(op.OldString, maxPreviewBytes/4), capTail(op.NewString, maxPreviewBytes/4))))
		}
		return pv
	}
	base := ""
	if old != nil {
		base = *old
	}
	if res, msg := applyEdits(base, old != nil, p, in.ops()); msg == "" {
		pv.Content = changeContent(p, old, res.text)
		if len(res.lines) > 0 {
			pv.Locations[0].Line = res.lines[0]
		}
	}
	return pv
}

func (Edit) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in editInput
	if r := decodeInput("edit", call.Input, &in); r != nil {
		return *r, nil
	}
	if in.Path == "" {
		return ErrorResult(`edit needs a "path"`), nil
	}
	if len(in.Edits) > 0 && (in.OldString != "" || in.NewString != "") {
		return ErrorResult(`edit takes either old_string/new_string or "edits", not both`), nil
	}
	p := env.Resolve(in.Path)
	want := approvedTarget(call, p)
	if msg := checkTarget(want); msg != "" {
		return ErrorResult(msg), nil
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return ErrorResult(fmt.Sprintf("%s is a directory", p)), nil
	}
	old, err := currentText(ctx, env, p)
	var tl *TooLargeError
	if errors.As(err, &tl) {
		return ErrorResult(fmt.Sprintf("%s is too large for edit (%s; edit loads files up to %s): change it with a shell command such as sed", p, byteSize(tl.Size), byteSize(tl.Limit))), nil
	}
	if err != nil {
		return fsFailure(ctx, "read", p, err)
	}
	base := ""
	if old != nil {
		base = *old
	}
	res, msg := applyEdits(base, old != nil, p, in.ops())
	if msg != "" {
		return ErrorResult(msg), nil
	}
	if err := writeTarget(ctx, env, want, res.text); err != nil {
		return fsFailure(ctx, "write", p, err)
	}
	var out string
	if old == nil {
		out = fmt.Sprintf("Created %s.", p)
	} else {
		out = fmt.Sprintf("Edited %s: %d replacement(s) at line(s) %s.", p, res.count, joinInts(res.lines))
	}
	locs := make([]Location, 0, len(res.lines))
	for _, l := range res.lines {
		locs = append(locs, Location{Path: p, Line: l})
	}
	return Result{Output: out, Content: changeContent(p, old, res.text), Locations: locs}, nil
}

type editResult struct {
	text  string
	count int
	lines []int // 1-based first line of each replacement, in the final text
}

// applyEdits applies ops in order to text. On failure it returns a message
// for the model and the text is to be left untouched.
func applyEdits(text string, exists bool, path string, ops []editOp) (editResult, string) {
	res := editResult{text: text}
	crlf := strings.Contains(text, "\r\n")
	for i, op := range ops {
		label := "edit"
		if len(ops) > 1 {
			label = fmt.Sprintf("edit %d of %d", i+1, len(ops))
		}
		if op.OldString == "" {
			if len(ops) == 1 && res.text == "" {
				res.text, res.count, res.lines = op.NewString, 1, []int{1}
				continue
			}
			if !exists {
				return res, fmt.Sprintf("%s: %s does not exist; to create it use an empty old_string as the only edit, or the write tool", label, path)
			}
			return res, fmt.Sprintf("%s: old_string is empty; give the exact text to replace", label)
		}
		if !exists {
			return res, fmt.Sprintf("%s: %s does not exist", label, path)
		}
		if op.OldString == op.NewString {
			return res, fmt.Sprintf("%s: old_string and new_string are identical; nothing would change", label)
		}
		oldS, newS := op.OldString, op.NewString
		if crlf && !strings.Contains(oldS, "\r\n") && !strings.Contains(res.text, oldS) {
			oldS = strings.ReplaceAll(oldS, "\n", "\r\n")
			newS = strings.ReplaceAll(newS, "\n", "\r\n")
		}
		n := strings.Count(res.text, oldS)
		switch {
		case n == 0:
			msg := fmt.Sprintf("%s: old_string was not found in %s.", label, path)
			if l := fuzzyLine(res.text, oldS); l > 0 {
				msg += fmt.Sprintf(" Text matching it except for whitespace/indentation starts at line %d; copy it exactly as the file has it.", l)
			} else {
				msg += " Read the file again to see its current content."
			}
			if i > 0 {
				msg += " Earlier edits in this call change the text later ones see. No edit was applied."
			}
			return res, msg
		case n > 1 && !op.ReplaceAll:
			return res, fmt.Sprintf("%s: old_string occurs %d times in %s (at lines %s). Add surrounding lines to make it unique, or set replace_all to replace every occurrence. No edit was applied.",
				label, n, path, joinInts(matchLines(res.text, oldS, 10)))
		}
		var lines []int
		var b strings.Builder
		rest, line := res.text, 1
		for k := 0; k < n && (k == 0 || op.ReplaceAll); k++ {
			j := strings.Index(rest, oldS)
			b.WriteString(rest[:j])
			line += strings.Count(rest[:j], "\n")
			lines = append(lines, line)
			b.WriteString(newS)
			line += strings.Count(newS, "\n")
			rest = rest[j+len(oldS):]
		}
		b.WriteString(rest)
		res.text = b.String()
		res.count += len(lines)
		res.lines = append(res.lines, lines...)
	}
	return res, ""
}

// matchLines returns the 1-based lines where sub starts, at most limit.
func matchLines(text, sub string, limit int) []int {
	var out []int
	off, line := 0, 1
	for len(out) < limit {
		j := strings.Index(text[off:], sub)
		if j < 0 {
			break
		}
		line += strings.Count(text[off:off+j], "\n")
		out = append(out, line)
		line += strings.Count(sub, "\n")
		off += j + len(sub)
	}
	return out
}

// fuzzyLine finds where old would match if leading and trailing whitespace
// of every line were ignored; 0 if nowhere.
func fuzzyLine(text, old string) int {
	want := strings.Split(strings.Trim(old, "\r\n"), "\n")
	for i := range want {
		want[i] = strings.TrimSpace(want[i])
	}
	if len(want) == 0 || (len(want) == 1 && want[0] == "") {
		return 0
	}
	have := strings.Split(text, "\n")
outer:
	for i := 0; i+len(want) <= len(have); i++ {
		for k, w := range want {
			h := strings.TrimSpace(have[i+k])
			if k == 0 && len(want) == 1 {
				if !strings.Contains(h, w) {
					continue outer
				}
				continue
			}
			if h != w {
				continue outer
			}
		}
		return i + 1
	}
	return 0
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
