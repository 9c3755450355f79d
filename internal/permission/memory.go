package permission

import (
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/corvid-agent/corvid/internal/tool"
)

// Memory holds a session's "always" answers. It is safe for concurrent use;
// the zero value is ready and a nil *Memory remembers nothing.
//
// What an answer covers depends on the call, and AlwaysLabel names it in
// the option the user picks:
//   - shell: the exact command line, and for a plain one (no redirection
//     that writes, no substitution, no wrapper) the shape of each command
//     in it ("git status" for "git status --short", "cat" for "cat a.txt",
//     the exact words otherwise; see shellScope), whose further arguments
//     must stay inside the workspace;
//   - fetch: the URL's host;
//   - delete: the exact files (never a directory);
//   - other file tools: allow always covers the tool inside the roots and
//     the exact paths of the call; reject always covers those exact paths;
//   - anything else: the tool.
type Memory struct {
	mu     sync.Mutex
	allow  map[string]*memo
	reject map[string]*memo
}

type memo struct {
	all    bool
	exact  map[string]bool // shell command lines, trimmed
	shapes []shellShape
	paths  map[string]bool
	hosts  map[string]bool
}

// NewMemory returns an empty memory.
func NewMemory() *Memory { return &Memory{} }

// Remember records an "always" answer for the call: a is Allow
// (allow_always) or Deny (reject_always); anything else is ignored.
func (m *Memory) Remember(toolName string, pv tool.Preview, a Action) {
	if m == nil || (a != Allow && a != Deny) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	book := &m.allow
	if a == Deny {
		book = &m.reject
	}
	if *book == nil {
		*book = map[string]*memo{}
	}
	e := (*book)[toolName]
	if e == nil {
		e = &memo{exact: map[string]bool{}, paths: map[string]bool{}, hosts: map[string]bool{}}
		(*book)[toolName] = e
	}
	switch pv.Access {
	case tool.AccessExecute:
		if pv.Command == "" {
			e.all = true
			return
		}
		e.exact[strings.TrimSpace(pv.Command)] = true
		if a == Deny {
			// A rejection may reach further than the line: every command
			// in it, by its shape, wherever it appears.
			e.shapes = append(e.shapes, looseShapes(pv.Command)...)
		} else if shapes, ok := shellScope(pv.Command); ok {
			e.shapes = append(e.shapes, shapes...)
		}
	case tool.AccessNetwork:
		if h := hostOf(pv.URL); h != "" {
			e.hosts[h] = true
		}
	case tool.AccessRead, tool.AccessWrite:
		for _, p := range pv.Paths {
			e.paths[p] = true
		}
		if a == Allow && pv.Kind != tool.KindDelete {
			e.all = true
		}
	default:
		e.all = true
	}
}

// Forget drops every remembered answer.
func (m *Memory) Forget() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.allow, m.reject = nil, nil
	m.mu.Unlock()
}

// matches reports whether a remembered answer of kind a covers the call.
// An allow must cover all of it; a reject needs to cover a part.
func (m *Memory) matches(toolName string, pv tool.Preview, sc scope, a Action) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	book := m.allow
	if a == Deny {
		book = m.reject
	}
	e := book[toolName]
	if e == nil {
		return false
	}
	forAllow := a == Allow
	switch pv.Access {
	case tool.AccessExecute:
		if e.all {
			return true
		}
		if e.exact[strings.TrimSpace(pv.Command)] {
			return true
		}
		if forAllow {
			return shapesCover(e.shapes, pv.Command, shellCwd(pv, sc), sc)
		}
		return shapesTouch(e.shapes, pv.Command)
	case tool.AccessNetwork:
		return e.hosts[hostOf(pv.URL)]
	case tool.AccessRead, tool.AccessWrite:
		if len(pv.Paths) == 0 {
			return e.all
		}
		for _, p := range pv.Paths {
			covered := e.paths[p] || (forAllow && e.all && sc.inside(p))
			if forAllow && pv.Kind == tool.KindDelete {
				covered = e.paths[p] && !isDir(p)
			}
			if covered != forAllow {
				return !forAllow
			}
		}
		return forAllow
	}
	return e.all
}

func isDir(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.IsDir()
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}
