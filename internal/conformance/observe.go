package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// observer collects what every line of every check showed, for the requirements
// that are judged on the whole run (stdio hygiene, envelope shape, schema).
type observer struct {
	mu     sync.Mutex
	lines  int
	errors int
	viol   map[string][]violation
}

type violation struct {
	check, detail, line string
}

// observed lists the requirements the observer decides, with the checks that always report them.
var observed = []string{"stdio.jsonrpc-lines", "stdio.utf8", "stdio.quiet-before-input",
	"envelope.result-xor-error", "envelope.error-message-one-line", "schema.messages"}

func newObserver() *observer { return &observer{viol: map[string][]violation{}} }

func (o *observer) countLine() {
	o.mu.Lock()
	o.lines++
	o.mu.Unlock()
}

func (o *observer) countError() {
	o.mu.Lock()
	o.errors++
	o.mu.Unlock()
}

func (o *observer) add(id, check, detail string, line []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.viol[id] = append(o.viol[id], violation{check, detail, string(line)})
}

func (o *observer) results(r *runner) []*Result {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*Result
	for _, id := range observed {
		req, _ := requirementByID(id)
		if !r.selected(req.Area) {
			continue
		}
		res := &Result{Requirement: req, Checks: "every line of every check"}
		vs := o.viol[id]
		switch {
		case len(vs) > 0:
			res.Status = Fail
			var first []string
			for i, v := range vs {
				if i < 5 {
					first = append(first, fmt.Sprintf("[%s] %s", v.check, v.detail))
				}
				if i < 20 {
					res.Transcript = append(res.Transcript, Entry{Check: v.check, Dir: "recv", Text: truncate(v.line, 2000)})
				}
			}
			res.Detail = fmt.Sprintf("%d violation(s); first: %s", len(vs), strings.Join(first, "; "))
		case o.lines == 0:
			res.Status, res.Detail = Skipped, "the agent wrote nothing"
		case id == "envelope.error-message-one-line" && o.errors == 0:
			res.Status, res.Detail = Skipped, "no error responses seen"
		default:
			res.Status, res.Detail = Pass, fmt.Sprintf("%d lines checked", o.lines)
		}
		out = append(out, res)
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// workspace is a check's private world: HOME, XDG dirs, the agent's cwd, scripts.
type workspace struct {
	root, home, cwd, scripts string
	xdg                      map[string]string
}

func newWorkspace(root string) (*workspace, error) {
	ws := &workspace{root: root, home: filepath.Join(root, "home"), cwd: filepath.Join(root, "work"),
		scripts: filepath.Join(root, "scripts"), xdg: map[string]string{
			"XDG_CONFIG_HOME": filepath.Join(root, "xdg", "config"),
			"XDG_DATA_HOME":   filepath.Join(root, "xdg", "data"),
			"XDG_STATE_HOME":  filepath.Join(root, "xdg", "state"),
			"XDG_CACHE_HOME":  filepath.Join(root, "xdg", "cache"),
			"XDG_RUNTIME_DIR": filepath.Join(root, "xdg", "run"),
		}}
	dirs := []string{ws.home, ws.cwd, ws.scripts, filepath.Join(root, "tmp")}
	for _, d := range ws.xdg {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	// Resolve symlinks (macOS /var → /private/var) so cwd comparisons hold.
	if p, err := filepath.EvalSymlinks(ws.cwd); err == nil {
		ws.cwd = p
	}
	return ws, nil
}

// env is the agent's environment: PATH and locale from ours, the isolated dirs,
// then the user's extra pairs. Nothing else leaks in (no API keys, no CORVID_HOME).
func (ws *workspace) env(extra []string) []string {
	env := []string{"HOME=" + ws.home, "TMPDIR=" + filepath.Join(ws.root, "tmp")}
	for k, v := range ws.xdg {
		env = append(env, k+"="+v)
	}
	for _, k := range []string{"PATH", "LANG", "LC_ALL", "SYSTEMROOT"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

func (ws *workspace) writeScript(name string) (string, error) {
	s, ok := scripts()[name]
	if !ok {
		return "", fmt.Errorf("no script %q", name)
	}
	path := filepath.Join(ws.scripts, name+".json")
	return path, s.WriteFile(path)
}
