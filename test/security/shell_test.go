package security

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Shell rules and "always allow" (issue #12 findings 3, 4 and 7, and the
// permission title). Each test fails on the hand-written splitter corvid
// had before mvdan.cc/sh.

// shAgent is one corvid whose scripted model makes tool calls in a
// workspace that has a sibling directory outside it.
type shAgent struct {
	*testkit.Editor
	ctx              context.Context
	ws, outside, sid string
}

// shCall is a scripted model's tool call.
func shCall(name string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_call", "name": name, "input": input}
}

func shShell(cmd string) map[string]any { return shCall("shell", map[string]any{"command": cmd}) }

// shStart serves ACP with a script that makes each group of calls in one
// model response (one turn per group), then answers "done".
func shStart(t *testing.T, turns [][]map[string]any, opts testkit.Options, config string, args ...string) *shAgent {
	t.Helper()
	base := t.TempDir()
	a := &shAgent{ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{a.ws, a.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var responses []any
	for _, calls := range turns {
		parts := make([]any, len(calls))
		for i, c := range calls {
			parts[i] = c
		}
		responses = append(responses, map[string]any{"parts": parts},
			map[string]any{"parts": []any{map[string]any{"type": "text", "text": "done"}}})
	}
	if len(responses) == 0 {
		responses = append(responses, map[string]any{"parts": []any{map[string]any{"type": "text", "text": "done"}}})
	}
	script := testkit.WriteScript(t, map[string]any{"responses": responses})
	opts.Args = append([]string{"acp", "-m", "script:" + script}, args...)
	opts.Dir = a.ws
	if config != "" {
		// The user config lives under CORVID_HOME/config; it must exist
		// before the process starts.
		corvidHome := filepath.Join(base, "corvid-home")
		if err := os.MkdirAll(filepath.Join(corvidHome, "config"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(corvidHome, "config", "config.toml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		opts.Env = append(opts.Env, "CORVID_HOME="+corvidHome)
	}
	a.Editor = testkit.Start(t, testkit.BuildCorvid(t), opts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	a.ctx = ctx
	if _, rerr := a.Initialize(ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	a.sid = a.NewSession(ctx, a.ws)
	return a
}

// prompt runs one turn to its end.
func (a *shAgent) prompt(t *testing.T) {
	t.Helper()
	if stop, rerr := a.Prompt(a.ctx, a.sid, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v\nstderr:\n%s", stop, rerr, a.Stderr())
	}
}

// toolText is everything the editor was shown of the session's tool calls.
func (a *shAgent) toolText() string {
	var b strings.Builder
	for _, u := range a.Updates(a.sid) {
		if u.SessionUpdate == "tool_call" || u.SessionUpdate == "tool_call_update" {
			b.Write(u.Raw)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// alwaysThenReject answers allow_always to the first request and rejects
// the rest: the user trusted one call, never the ones that follow.
func alwaysThenReject() testkit.PermissionHandler {
	var mu sync.Mutex
	n := 0
	return func(ctx context.Context, req testkit.PermissionRequest) (testkit.PermissionOutcome, error) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			return testkit.PickKind("allow_always")(ctx, req)
		}
		return testkit.RejectOnce()(ctx, req)
	}
}

// Finding 3: under shell(go test*), quoting and comments that a splitter
// misreads must not smuggle in another command.
func TestShellAllowRuleIsNotBypassedByQuotingOrComments(t *testing.T) {
	attacks := map[string]string{
		"ansi-c quote": `go test $'\'' ; touch pwned ; echo $'\''`,
		"comment":      "go test ./... #'\ntouch pwned\n#'",
		"continuation": "go test \\\n; touch pwned",
		"substitution": "go test \"$(touch pwned)\"",
	}
	for name, cmd := range attacks {
		t.Run(name, func(t *testing.T) {
			a := shStart(t, [][]map[string]any{{shShell(cmd)}}, testkit.Options{Permission: testkit.RejectOnce()}, "",
				"--allow", "shell(go test*)")
			a.prompt(t)
			if exists(filepath.Join(a.ws, "pwned")) {
				t.Errorf("%q ran touch pwned under shell(go test*)", cmd)
			}
			if n := len(a.Permissions()); n != 1 {
				t.Errorf("%d permission requests, want the call to ask once", n)
			}
		})
	}
}

// The rule still lets plain go test lines run unasked.
func TestShellAllowRuleStillCoversPlainLines(t *testing.T) {
	a := shStart(t, [][]map[string]any{{shShell("go test -h >/dev/null 2>&1; go test -h > inside.log 2>&1 # fine")}},
		testkit.Options{Permission: testkit.RejectOnce()}, "", "--allow", "shell(go test*)")
	a.prompt(t)
	if n := len(a.Permissions()); n != 0 {
		t.Errorf("%d permission requests for a plain go test line, want none", n)
	}
	if !exists(filepath.Join(a.ws, "inside.log")) {
		t.Error("the allowed command did not run")
	}
}

// Finding 4: a redirection outside the workspace is not covered by the rule.
func TestShellAllowRuleDoesNotCoverRedirectionOutside(t *testing.T) {
	a := shStart(t, [][]map[string]any{{shShell("go test ./... > ../outside/f")}},
		testkit.Options{Permission: testkit.RejectOnce()}, "", "--allow", "shell(go test*)")
	a.prompt(t)
	if exists(filepath.Join(a.outside, "f")) {
		t.Error("go test ./... > ../outside/f wrote outside the workspace under shell(go test*)")
	}
	if n := len(a.Permissions()); n != 1 {
		t.Errorf("%d permission requests, want 1", n)
	}
}

// Finding 7: a configured deny holds under --yolo however the command is
// spelled.
func TestConfiguredShellDenyHoldsUnderYoloForEverySpelling(t *testing.T) {
	spellings := []string{
		"rm  -rf d1", "rm -r -f d2", "rm -fr d3", "/bin/rm -rf d4", `\rm -rf d5`, "bash -c 'rm -rf d6'",
		"command rm -rf d7", "env rm -Rf d8", "echo d9 | xargs rm -rf",
	}
	var calls []map[string]any
	for _, s := range spellings {
		calls = append(calls, shShell(s))
	}
	a := shStart(t, [][]map[string]any{calls}, testkit.Options{Permission: testkit.RejectOnce()},
		"[permissions]\ndeny = [\"shell(rm -rf *)\"]\n", "--yolo")
	for i := range spellings {
		d := filepath.Join(a.ws, "d"+string(rune('1'+i)))
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a.prompt(t)
	for i, s := range spellings {
		if !exists(filepath.Join(a.ws, "d"+string(rune('1'+i)))) {
			t.Errorf("%q ran under --yolo despite deny shell(rm -rf *)", s)
		}
	}
	if got := strings.Count(a.toolText(), "denied by the rule"); got < len(spellings) {
		t.Errorf("%d tool results say the rule denied them, want %d", got, len(spellings))
	}
}

// Finding 4: "always allow" on one call never widens to a redirection, an
// outside path or a recursive delete.
func TestAlwaysAllowDoesNotWiden(t *testing.T) {
	cases := []struct {
		name        string
		first, then map[string]any
		setup       func(a *shAgent)
		harmed      func(a *shAgent) string
		label       string
	}{
		{
			name: "echo then append to bashrc", first: shShell("echo hello"), then: shShell("echo x >> ~/.bashrc"),
			harmed: func(a *shAgent) string {
				if exists(filepath.Join(a.Home(), ".bashrc")) {
					return "~/.bashrc was written"
				}
				return ""
			},
			label: "`echo …`",
		},
		{
			name: "cat inside then outside", first: shShell("cat inside.txt"), then: shShell("cat ../outside/secret.txt"),
			setup: func(a *shAgent) {
				_ = os.WriteFile(filepath.Join(a.ws, "inside.txt"), []byte("inside\n"), 0o644)
				_ = os.WriteFile(filepath.Join(a.outside, "secret.txt"), []byte("s3cr3t-value\n"), 0o644)
			},
			harmed: func(a *shAgent) string {
				if strings.Contains(a.toolText(), "s3cr3t-value") {
					return "the outside secret reached the editor"
				}
				return ""
			},
			label: "`cat …`",
		},
		{
			name: "one delete then a recursive one", first: shCall("delete", map[string]any{"path": "a.log"}),
			then: shCall("delete", map[string]any{"path": "src", "recursive": true}),
			setup: func(a *shAgent) {
				_ = os.WriteFile(filepath.Join(a.ws, "a.log"), []byte("x"), 0o644)
				_ = os.MkdirAll(filepath.Join(a.ws, "src", "pkg"), 0o755)
			},
			harmed: func(a *shAgent) string {
				if !exists(filepath.Join(a.ws, "src")) {
					return "src was deleted recursively"
				}
				return ""
			},
			label: "deleting this file",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := shStart(t, [][]map[string]any{{c.first}, {c.then}}, testkit.Options{Permission: alwaysThenReject()}, "")
			if c.setup != nil {
				c.setup(a)
			}
			a.prompt(t)
			a.prompt(t)
			if why := c.harmed(a); why != "" {
				t.Errorf("after always-allow of %v: %s", c.first["input"], why)
			}
			perms := a.Permissions()
			if len(perms) != 2 {
				t.Fatalf("%d permission requests, want 2 (the second call must ask)", len(perms))
			}
			var label string
			for _, o := range perms[0].Request.Options {
				if o.Kind == "allow_always" {
					label = o.Name
				}
			}
			if !strings.Contains(label, c.label) {
				t.Errorf("allow_always option %q does not name its scope %q", label, c.label)
			}
		})
	}
}

// --allow takes a rule whole, commas included.
func TestAllowFlagKeepsCommasInsideTheRule(t *testing.T) {
	a := shStart(t, [][]map[string]any{{shShell("echo a,b > out.txt")}}, testkit.Options{Permission: testkit.RejectOnce()}, "",
		"--allow", "shell(echo a,b*)")
	a.prompt(t)
	if n := len(a.Permissions()); n != 0 {
		t.Errorf("%d permission requests, want none under --allow 'shell(echo a,b*)'", n)
	}
	if b, err := os.ReadFile(filepath.Join(a.ws, "out.txt")); err != nil || string(b) != "a,b\n" {
		t.Errorf("out.txt = %q, %v", b, err)
	}
}

// A rule naming no known tool is warned about at start.
func TestUnknownToolInRuleIsWarnedAboutAtStart(t *testing.T) {
	a := shStart(t, nil, testkit.Options{}, "[permissions]\ndeny = [\"shel(rm*)\"]\n", "--allow", "bash_exec")
	for _, rule := range []string{"shel(rm*)", "bash_exec"} {
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(a.Stderr(), rule) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !strings.Contains(a.Stderr(), "names no known tool") || !strings.Contains(a.Stderr(), rule) {
			t.Errorf("no start-up warning about %q; stderr:\n%s", rule, a.Stderr())
		}
	}
}

// Low: the permission title cannot hide the end of a long or multi-line
// command, and the request carries the whole command.
func TestPermissionTitleShowsTheWholeCommand(t *testing.T) {
	cmds := []string{
		"ls" + strings.Repeat(" ", 90) + "; echo hidden-tail | cat",
		"ls\n\n\necho hidden-tail | cat",
		"ls " + strings.Repeat("-a ", 60) + "; echo hidden-tail | cat",
	}
	var calls []map[string]any
	for _, c := range cmds {
		calls = append(calls, shShell(c))
	}
	a := shStart(t, [][]map[string]any{calls}, testkit.Options{Permission: testkit.RejectOnce()}, "")
	a.prompt(t)
	perms := a.Permissions()
	if len(perms) != len(cmds) {
		t.Fatalf("%d permission requests, want %d", len(perms), len(cmds))
	}
	for i, p := range perms {
		if !strings.Contains(p.Request.Title, "hidden-tail | cat") {
			t.Errorf("title %q hides the end of %q", p.Request.Title, cmds[i])
		}
		if strings.Contains(p.Request.Title, "  ") || strings.Contains(p.Request.Title, "\n") {
			t.Errorf("title %q keeps whitespace runs", p.Request.Title)
		}
		if !strings.Contains(string(p.Request.ToolCall), mustJSONString(cmds[i])) {
			t.Errorf("the request's tool call does not carry the full command %q: %s", cmds[i], p.Request.ToolCall)
		}
	}
	if !strings.Contains(perms[1].Request.Title, "(4 lines)") {
		t.Errorf("multi-line title %q does not say it has 4 lines", perms[1].Request.Title)
	}
}

// mustJSONString is s as it appears inside a JSON string.
func mustJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
