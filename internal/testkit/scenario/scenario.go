// Package scenario runs corvid's behaviour specifications: txtar files that each hold a
// scripted model, the workspace, what the client does, and the transcript the built
// binary must produce. The format is documented in test/scenarios/README.md; the files
// live in test/scenarios. Start with [RunDir].
//
// A scenario drives the built binary through the fake editor in internal/testkit, so
// every frame is also validated against the ACP schema. The expected transcript is
// golden: go test ./test/scenarios -update rewrites it from what the binary sent.
package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Options configures a run.
type Options struct {
	// Update rewrites each file's transcript section with what the binary produced
	// instead of comparing.
	Update bool
}

// RunDir runs every *.txtar file in dir as a subtest named after the file.
func RunDir(t *testing.T, dir string, opts Options) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scenarios in %s", dir)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			t.Parallel()
			Run(t, f, opts)
		})
	}
}

// Scenario is one parsed file.
type Scenario struct {
	Script     string            // script.json: the model's script (docs/script-format.md)
	Files      map[string]string // files/PATH: workspace files, PATH relative to the workspace
	Want       map[string]string // want/PATH: what PATH must hold after the steps
	Absent     []string          // absent: paths that must not exist after the steps
	Steps      []Step            // steps: what the client does, in order
	Transcript string            // transcript: the expected frames, normalised
	Host       string            // from the host step; default "minimal"
	Args       []string          // from args steps: extra arguments of `corvid acp`
	Hide       map[string]bool   // from hide steps: session update kinds left out of the transcript

	archive archive
}

// Step is one line of the steps section: a verb and the rest of the line.
type Step struct {
	Line int
	Verb string
	Arg  string
}

// Parse reads a scenario file.
func Parse(data []byte) (*Scenario, error) {
	a := parseArchive(data)
	s := &Scenario{Files: map[string]string{}, Want: map[string]string{}, Host: "minimal", archive: a,
		Hide: map[string]bool{"available_commands_update": true}}
	var ok bool
	if s.Script, ok = a.get("script.json"); !ok {
		return nil, fmt.Errorf("no script.json section")
	}
	steps, ok := a.get("steps")
	if !ok {
		return nil, fmt.Errorf("no steps section")
	}
	s.Transcript, _ = a.get("transcript")
	absent, _ := a.get("absent")
	s.Absent = strings.Fields(absent)
	for _, f := range a.files {
		if p, ok := strings.CutPrefix(f.name, "files/"); ok {
			s.Files[p] = f.data
		}
		if p, ok := strings.CutPrefix(f.name, "want/"); ok {
			s.Want[p] = f.data
		}
	}
	for i, line := range strings.Split(steps, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, arg, _ := strings.Cut(line, " ")
		st := Step{Line: i + 1, Verb: verb, Arg: strings.TrimSpace(arg)}
		switch verb {
		case "host":
			s.Host = st.Arg
		case "args":
			s.Args = append(s.Args, strings.Fields(st.Arg)...)
		case "hide":
			for _, k := range strings.Fields(st.Arg) {
				s.Hide[k] = true
			}
		case "prompt", "permission", "call", "buffer":
			s.Steps = append(s.Steps, st)
		case "elicit":
			if !json.Valid([]byte(st.Arg)) {
				return nil, fmt.Errorf("steps line %d: the elicit answer is not JSON: %s", st.Line, st.Arg)
			}
			s.Steps = append(s.Steps, st)
		default:
			return nil, fmt.Errorf("steps line %d: unknown verb %q (want host, args, hide, prompt, permission, elicit, call or buffer)", st.Line, verb)
		}
	}
	if _, ok := hosts[s.Host]; !ok {
		return nil, fmt.Errorf("unknown host %q", s.Host)
	}
	return s, nil
}

var hosts = map[string]func() testkit.Host{
	"minimal": testkit.Minimal, "zed": testkit.Zed, "emacs": testkit.Emacs,
	"gosdk": testkit.GoSDK, "oldgascity": testkit.OldGasCity, "newgascity": testkit.NewGasCity,
	"form": formHost,
}

// formHost is minimal plus form elicitation.
func formHost() testkit.Host {
	h := testkit.Minimal()
	h.Name = "form"
	h.Params["clientCapabilities"] = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	return h
}

// Run runs the scenario in path and compares (or, with opts.Update, rewrites) its
// transcript.
func Run(t *testing.T, path string, opts Options) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	got := s.Play(t)
	if t.Failed() {
		return
	}
	if opts.Update {
		if got != s.Transcript {
			s.archive.set("transcript", got)
			if err := os.WriteFile(path, s.archive.format(), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("updated %s", path)
		}
		return
	}
	if got != s.Transcript {
		t.Errorf("%s: the transcript differs from the golden one (- want, + got; go test -update rewrites it):\n%s",
			path, lineDiff(s.Transcript, got))
	}
}

// Play starts the built corvid on a fresh workspace holding s.Files, initializes it as
// s.Host, opens a session, performs s.Steps and returns the normalised transcript of
// everything after session/new.
func (s *Scenario) Play(t *testing.T) string {
	t.Helper()
	bin := testkit.BuildCorvid(t)
	work := t.TempDir()
	if real, err := filepath.EvalSymlinks(work); err == nil {
		work = real
	}
	for name, data := range s.Files {
		p := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	answers := &answerQueue{t: t}
	elicits := &elicitQueue{t: t}
	for _, st := range s.Steps {
		switch st.Verb {
		case "permission":
			answers.kinds = append(answers.kinds, st.Arg)
		case "elicit":
			elicits.answers = append(elicits.answers, json.RawMessage(st.Arg))
		}
	}
	script := testkit.WriteScript(t, s.Script)
	e := testkit.Start(t, bin, testkit.Options{
		Args:        append([]string{"acp", "-m", "script:" + script}, s.Args...),
		Dir:         work,
		Permission:  answers.answer,
		Elicitation: elicits.answer,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, rerr := e.Initialize(ctx, hosts[s.Host]()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	sid := e.NewSession(ctx, work)
	start := len(e.Transcript())
	for _, st := range s.Steps {
		s.perform(ctx, t, e, st, sid, work)
	}
	if n := answers.left(); n > 0 {
		t.Errorf("%d permission answers were never asked for", n)
	}
	if n := elicits.left(); n > 0 {
		t.Errorf("%d elicit answers were never asked for", n)
	}
	// Barrier: a request after the last step. Whatever the agent sent after the last
	// response arrives before this one's, so it lands in the transcript.
	var list struct{}
	e.MustCall(ctx, "session/list", map[string]any{"cwd": work}, &list)
	s.checkWorkspace(t, work)
	lines := e.Transcript()
	lines = lines[start : len(lines)-1] // the barrier's response is last
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Dir == testkit.ToAgent && strings.Contains(lines[i].Text, `"method":"session/list"`) {
			lines = append(lines[:i:i], lines[i+1:]...)
			break
		}
	}
	n := newNormaliser(work, e.Home(), script, s.Hide)
	var b strings.Builder
	for _, l := range lines {
		if text, keep := n.frame(l.Text); keep {
			b.WriteString(string(l.Dir) + " " + text + "\n")
		}
	}
	return b.String()
}

// checkWorkspace compares the workspace with the want/ and absent sections.
func (s *Scenario) checkWorkspace(t *testing.T, work string) {
	t.Helper()
	for name, want := range s.Want {
		b, err := os.ReadFile(filepath.Join(work, filepath.FromSlash(name)))
		if err != nil || string(b) != want {
			t.Errorf("after the steps %s holds %q (%v), want %q", name, b, err, want)
		}
	}
	for _, name := range s.Absent {
		if _, err := os.Lstat(filepath.Join(work, filepath.FromSlash(name))); err == nil {
			t.Errorf("after the steps %s exists, want it absent", name)
		}
	}
}

func (s *Scenario) perform(ctx context.Context, t *testing.T, e *testkit.Editor, st Step, sid, work string) {
	t.Helper()
	switch st.Verb {
	case "prompt":
		_, _ = e.Call(ctx, "session/prompt", testkit.TextPrompt(sid, unquote(st.Arg)))
	case "call":
		method, params, _ := strings.Cut(st.Arg, " ")
		params = strings.NewReplacer("$SID", sid, "$WORK", work).Replace(params)
		if params == "" {
			params = "{}"
		}
		if !json.Valid([]byte(params)) {
			t.Fatalf("steps line %d: params of %s are not JSON: %s", st.Line, method, params)
		}
		_, _ = e.Call(ctx, method, json.RawMessage(params))
	case "buffer":
		path, text, _ := strings.Cut(st.Arg, " ")
		e.SetBuffer(filepath.Join(work, path), unquote(text))
	}
}

// unquote reads a step argument: a Go string literal if it starts with a quote (for
// newlines), else the text as written.
func unquote(s string) string {
	if strings.HasPrefix(s, `"`) {
		var out string
		if err := json.Unmarshal([]byte(s), &out); err == nil {
			return out
		}
	}
	return s
}

// answerQueue answers permission requests with the scenario's permission steps, in
// order: an option kind (allow_once, allow_always, reject_once, reject_always),
// "option:ID" (that optionId, offered or not) or "cancel".
type answerQueue struct {
	t     *testing.T
	mu    sync.Mutex
	kinds []string
}

func (q *answerQueue) answer(ctx context.Context, req testkit.PermissionRequest) (testkit.PermissionOutcome, error) {
	q.mu.Lock()
	if len(q.kinds) == 0 {
		q.mu.Unlock()
		return testkit.PermissionOutcome{Cancelled: true}, fmt.Errorf("a permission request the scenario has no answer for (add a permission step)")
	}
	kind := q.kinds[0]
	q.kinds = q.kinds[1:]
	q.mu.Unlock()
	if kind == "cancel" {
		return testkit.CancelPermission()(ctx, req)
	}
	if id, ok := strings.CutPrefix(kind, "option:"); ok {
		return testkit.PickOption(id)(ctx, req)
	}
	return testkit.PickKind(kind)(ctx, req)
}

// elicitQueue answers elicitation/create with the scenario's elicit steps, in order.
type elicitQueue struct {
	t       *testing.T
	mu      sync.Mutex
	answers []json.RawMessage
}

func (q *elicitQueue) answer(context.Context, json.RawMessage) (any, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.answers) == 0 {
		q.t.Errorf("an elicitation the scenario has no answer for (add an elicit step)")
		return map[string]any{"action": "cancel"}, nil
	}
	a := q.answers[0]
	q.answers = q.answers[1:]
	return a, nil
}

func (q *elicitQueue) left() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.answers)
}

func (q *answerQueue) left() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.kinds)
}

// normaliser rewrites what differs between runs of the same scenario: session, message
// and tool call ids and turn ids become $SID1, $MSG1, $TOOL1, $TURN1… in order of first appearance; the
// script, workspace and home paths become $SCRIPT, $WORK and $HOME; timestamps become $TIME; token
// counts become "$N".
type normaliser struct {
	paths *strings.Replacer
	ids   map[string]map[string]string // key → original → placeholder
	hide  map[string]bool              // session update kinds to leave out
}

var idKeys = map[string]string{"sessionId": "SID", "messageId": "MSG", "toolCallId": "TOOL", "terminalId": "TERM",
	"codebuddy.ai/conversationRequestId": "TURN"}

// countKeys hold token counts, which follow the length of the system prompt and the
// tool descriptions rather than the scenario.
var countKeys = map[string]bool{"used": true, "inputTokens": true, "outputTokens": true, "totalTokens": true,
	"cachedReadTokens": true, "cachedWriteTokens": true, "thoughtTokens": true}

var timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

func newNormaliser(work, home, script string, hide map[string]bool) *normaliser {
	return &normaliser{
		paths: strings.NewReplacer(script, "$SCRIPT", work, "$WORK", home, "$HOME"),
		ids:   map[string]map[string]string{},
		hide:  hide,
	}
}

// frame normalises one transcript line; keep is false for the session updates of a
// hidden kind (by default available_commands_update, which follows session/new on its
// own schedule).
func (n *normaliser) frame(text string) (string, bool) {
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return text, true
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "jsonrpc") // always "2.0"; the editor checks it
		if p, ok := m["params"].(map[string]any); ok {
			if u, ok := p["update"].(map[string]any); ok && n.hide[fmt.Sprint(u["sessionUpdate"])] {
				return "", false
			}
		}
	}
	v = n.value("", v)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return text, true
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}

func (n *normaliser) value(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = n.value(k, e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = n.value(key, e)
		}
		return x
	case json.Number:
		if countKeys[key] {
			return "$N"
		}
		return x
	case string:
		if kind, ok := idKeys[key]; ok {
			return n.id(kind, x)
		}
		return timestamp.ReplaceAllString(n.paths.Replace(x), "$$TIME")
	}
	return v
}

func (n *normaliser) id(kind, orig string) string {
	m := n.ids[kind]
	if m == nil {
		m = map[string]string{}
		n.ids[kind] = m
	}
	if p, ok := m[orig]; ok {
		return p
	}
	p := fmt.Sprintf("$%s%d", kind, len(m)+1)
	m[orig] = p
	return p
}

// lineDiff is a line diff of want and got (longest common subsequence), with two lines
// of context around each change.
func lineDiff(want, got string) string {
	a, b := strings.Split(strings.TrimSuffix(want, "\n"), "\n"), strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		mark byte
		line string
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, op{'+', b[j]})
			j++
		default:
			ops = append(ops, op{'-', a[i]})
			i++
		}
	}
	var out strings.Builder
	for k, o := range ops {
		near := false
		for d := -2; d <= 2; d++ {
			if k+d >= 0 && k+d < len(ops) && ops[k+d].mark != ' ' {
				near = true
			}
		}
		if near {
			fmt.Fprintf(&out, "%c %s\n", o.mark, o.line)
		}
	}
	return out.String()
}
