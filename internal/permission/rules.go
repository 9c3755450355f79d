package permission

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/corvid-agent/corvid/internal/tool"
)

// Rule is one configured entry: a tool name (globs with * allowed, e.g.
// "mcp:github/*") and an optional pattern in parentheses whose meaning
// depends on what the tool accesses:
//
//   - shell and other execute tools: the command, with * matching anything
//     ("shell(git diff*)"); "git diff:*" means "git diff" and its arguments.
//     The command line is parsed as bash parses it; an allow covers it only
//     if every simple command in it matches and nothing runs hidden code
//     (see shellrules.go); a deny also matches the normalised argv
//     ("rm -rf *" stops "/bin/rm -r -f x" and "bash -c 'rm -fr x'").
//   - file tools: a path glob (doublestar) relative to any root, or
//     absolute, or starting with ~/ ("write(docs/**)", "read(/etc/hosts)").
//     A directory pattern covers what lies inside it.
//   - fetch: a URL glob ("fetch(https://go.dev/*)") or "domain:HOST", which
//     covers the host and its subdomains.
//
// A rule without a pattern covers every call of the tool, except that an
// allow rule without a pattern covers file paths inside the roots only:
// reaching outside the workspace needs a rule that names the place.
type Rule struct {
	Tool    string
	Pattern string // "" when the rule has none
	raw     string
}

func (r Rule) String() string { return r.raw }

// Rules is a parsed allow/ask/deny configuration. Precedence between the
// lists is deny > ask > allow (see Decide). The zero value and nil hold no
// rules.
type Rules struct {
	Allow, Ask, Deny []Rule
}

// ParseRules parses the three configured lists.
func ParseRules(allow, ask, deny []string) (*Rules, error) {
	var rs Rules
	var errs []error
	for _, l := range []struct {
		src []string
		dst *[]Rule
	}{{allow, &rs.Allow}, {ask, &rs.Ask}, {deny, &rs.Deny}} {
		for _, s := range l.src {
			r, err := ParseRule(s)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			*l.dst = append(*l.dst, r)
		}
	}
	return &rs, errors.Join(errs...)
}

// ParseRule parses "tool" or "tool(pattern)".
func ParseRule(s string) (Rule, error) {
	raw := s
	s = strings.TrimSpace(s)
	r := Rule{Tool: s, raw: raw}
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return Rule{}, fmt.Errorf("permission rule %q: missing closing parenthesis", raw)
		}
		r.Tool = strings.TrimSpace(s[:i])
		r.Pattern = strings.TrimSpace(s[i+1 : len(s)-1])
		if r.Pattern == "" {
			return Rule{}, fmt.Errorf("permission rule %q: empty pattern; write %q for the whole tool", raw, r.Tool)
		}
	}
	if r.Tool == "" || strings.ContainsAny(r.Tool, " ()") {
		return Rule{}, fmt.Errorf("permission rule %q: expected tool or tool(pattern)", raw)
	}
	if _, err := path.Match(r.Tool, ""); err != nil {
		return Rule{}, fmt.Errorf("permission rule %q: bad tool name pattern", raw)
	}
	if strings.HasPrefix(r.Pattern, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			r.Pattern = filepath.Join(home, r.Pattern[2:])
		}
	}
	return r, nil
}

func (rs *Rules) denies() []Rule {
	if rs == nil {
		return nil
	}
	return rs.Deny
}

func (rs *Rules) asks() []Rule {
	if rs == nil {
		return nil
	}
	return rs.Ask
}

func (rs *Rules) allows() []Rule {
	if rs == nil {
		return nil
	}
	return rs.Allow
}

func findRule(list []Rule, toolName string, pv tool.Preview, sc scope, forAllow bool) (Rule, bool) {
	for _, r := range list {
		if r.matches(toolName, pv, sc, forAllow) {
			return r, true
		}
	}
	return Rule{}, false
}

// findAllow reports whether allow rules cover the whole call: one rule,
// or, for a chained command or a call with several paths, each part by
// some rule (git diff by one rule, go test by another).
func findAllow(list []Rule, toolName string, pv tool.Preview, sc scope) ([]Rule, bool) {
	if pv.Access == tool.AccessExecute {
		return allowShell(list, toolName, pv, sc)
	}
	if r, ok := findRule(list, toolName, pv, sc, true); ok {
		return []Rule{r}, true
	}
	if pv.Access != tool.AccessRead && pv.Access != tool.AccessWrite || len(pv.Paths) < 2 {
		return nil, false
	}
	var used []Rule
	for _, p := range pv.Paths {
		one := pv
		one.Paths = []string{p}
		r, ok := findRule(list, toolName, one, sc, true)
		if !ok {
			return nil, false
		}
		if !slices.ContainsFunc(used, func(u Rule) bool { return u.raw == r.raw }) {
			used = append(used, r)
		}
	}
	return used, true
}

// toolAliases maps names people carry over from other agents.
var toolAliases = map[string]string{"bash": "shell", "Bash": "shell", "Read": "read",
	"Write": "write", "Edit": "edit", "WebFetch": "fetch", "Grep": "grep", "Glob": "glob", "LS": "ls"}

func (r Rule) matchesTool(name string) bool {
	t := r.Tool
	if a, ok := toolAliases[t]; ok {
		t = a
	}
	ok, _ := path.Match(t, name)
	return ok
}

// matches reports whether r covers the call. An allow must cover all of a
// call (every path, every chained command); a deny or ask needs to touch
// only part of it.
func (r Rule) matches(toolName string, pv tool.Preview, sc scope, forAllow bool) bool {
	if !r.matchesTool(toolName) {
		return false
	}
	switch pv.Access {
	case tool.AccessRead, tool.AccessWrite:
		if r.Pattern == "" {
			return !forAllow || sc.allInside(pv.Paths)
		}
		return matchPaths(r.Pattern, pv.Paths, sc, forAllow)
	case tool.AccessExecute:
		if r.Pattern == "" {
			return true
		}
		if forAllow {
			_, ok := allowShell([]Rule{r}, toolName, pv, sc)
			return ok
		}
		return denyShell(r.Pattern, pv.Command)
	case tool.AccessNetwork:
		if r.Pattern == "" {
			return true
		}
		return matchURL(r.Pattern, pv.URL)
	}
	return r.Pattern == ""
}

// matchPaths: for an allow every path must match, by its written form and
// by its real (symlink-free) form; for a deny or ask one form of one path
// is enough.
func matchPaths(pattern string, paths []string, sc scope, forAllow bool) bool {
	if len(paths) == 0 {
		return false
	}
	for _, p := range paths {
		forms := []string{filepath.Clean(p), tool.RealPath(p)}
		hit := 0
		for _, f := range forms {
			if matchPath(pattern, f, sc) {
				hit++
			}
		}
		switch {
		case forAllow && hit < len(forms):
			return false
		case !forAllow && hit > 0:
			return true
		}
	}
	return forAllow
}

// matchPath matches one absolute path, or one of its parent directories,
// against an absolute pattern or a pattern relative to a root.
func matchPath(pattern, p string, sc scope) bool {
	var cands []string
	if filepath.IsAbs(pattern) {
		cands = []string{p}
	} else {
		for _, root := range sc.roots {
			for _, r := range []string{filepath.Clean(root), tool.RealPath(root)} {
				rel, err := filepath.Rel(r, p)
				if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
					cands = append(cands, rel)
				}
			}
		}
	}
	pattern = filepath.ToSlash(pattern)
	for _, c := range cands {
		c = filepath.ToSlash(c)
		for {
			if ok, _ := doublestar.Match(pattern, c); ok {
				return true
			}
			parent := path.Dir(c)
			if parent == c || parent == "." || parent == "/" {
				break
			}
			c = parent
		}
	}
	return false
}

func matchCommandPattern(pattern, cmd string) bool {
	if prefix, ok := strings.CutSuffix(pattern, ":*"); ok {
		return cmd == prefix || strings.HasPrefix(cmd, prefix+" ")
	}
	return wildcard(pattern, cmd)
}

// matchURL matches a URL glob, or "domain:HOST" against the host and its
// subdomains.
func matchURL(pattern, raw string) bool {
	if host, ok := strings.CutPrefix(pattern, "domain:"); ok {
		u, err := url.Parse(raw)
		if err != nil {
			return false
		}
		h := strings.ToLower(u.Hostname())
		host = strings.ToLower(host)
		return h == host || strings.HasSuffix(h, "."+host)
	}
	return wildcard(pattern, raw)
}

// wildcard matches s against a pattern where * matches any run of
// characters (spaces and slashes included) and everything else is literal.
func wildcard(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, last)
}

// UnknownTool reports whether the rule's tool name matches none of known
// (the built-in tools' permission names) and cannot name an MCP tool
// ("mcp:SERVER/TOOL", known only once a session starts): most likely a
// typo, and a rule that never matches. Launchers warn about it.
func (r Rule) UnknownTool(known []string) bool {
	if strings.HasPrefix(r.Tool, "mcp:") || strings.HasPrefix(r.Tool, "mcp") && strings.ContainsAny(r.Tool, "*?[") {
		return false
	}
	for _, k := range known {
		if r.matchesTool(k) {
			return false
		}
	}
	return true
}
