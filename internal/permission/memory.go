package permission

import (
	"net/url"
	"strings"
	"sync"

	"github.com/corvid-agent/corvid/internal/tool"
)

// Memory holds a session's "always" answers. It is safe for concurrent use;
// the zero value is ready and a nil *Memory remembers nothing.
//
// What an answer covers depends on the call:
//   - shell: the command prefix of each chained part ("git status" for
//     "git status --short"; see CommandPrefix);
//   - fetch: the URL's host;
//   - file tools: allow always covers the tool inside the roots and the
//     exact paths of the call; reject always covers those exact paths;
//   - anything else: the tool.
type Memory struct {
	mu     sync.Mutex
	allow  map[string]*memo
	reject map[string]*memo
}

type memo struct {
	all      bool
	prefixes map[string]bool
	paths    map[string]bool
	hosts    map[string]bool
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
		e = &memo{prefixes: map[string]bool{}, paths: map[string]bool{}, hosts: map[string]bool{}}
		(*book)[toolName] = e
	}
	switch pv.Access {
	case tool.AccessExecute:
		if pv.Command == "" {
			e.all = true
			return
		}
		parts, plain := splitCommand(pv.Command)
		if !plain {
			// A command that runs other commands is remembered whole.
			e.prefixes[strings.TrimSpace(pv.Command)] = true
			return
		}
		for _, p := range parts {
			e.prefixes[CommandPrefix(p)] = true
		}
	case tool.AccessNetwork:
		if h := hostOf(pv.URL); h != "" {
			e.hosts[h] = true
		}
	case tool.AccessRead, tool.AccessWrite:
		for _, p := range pv.Paths {
			e.paths[p] = true
		}
		if a == Allow {
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
		whole := strings.TrimSpace(pv.Command)
		if e.prefixes[whole] {
			return true
		}
		parts, plain := splitCommand(pv.Command)
		if forAllow && !plain {
			return false
		}
		for _, p := range parts {
			if hasPrefix(e.prefixes, p) != forAllow {
				return !forAllow
			}
		}
		return forAllow && len(parts) > 0
	case tool.AccessNetwork:
		return e.hosts[hostOf(pv.URL)]
	case tool.AccessRead, tool.AccessWrite:
		if len(pv.Paths) == 0 {
			return e.all
		}
		for _, p := range pv.Paths {
			covered := e.paths[p] || (forAllow && e.all && sc.inside(p))
			if covered != forAllow {
				return !forAllow
			}
		}
		return forAllow
	}
	return e.all
}

// hasPrefix reports whether cmd is, or starts with, a remembered prefix
// followed by a space.
func hasPrefix(prefixes map[string]bool, cmd string) bool {
	for p := range prefixes {
		if cmd == p || strings.HasPrefix(cmd, p+" ") {
			return true
		}
	}
	return false
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}
