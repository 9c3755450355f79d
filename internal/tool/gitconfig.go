package tool

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// This file finds git's global ignore file, core.excludesFile, the way git
// does: the value set last in the system, global and repository config
// files (and GIT_CONFIG_COUNT's pairs), with "~/" expanded, or when unset
// $XDG_CONFIG_HOME/git/ignore ($HOME/.config/git/ignore). Its parser
// is checked against `git config --get` by TestGitConfigValueMatchesGit.
//
// Not followed: [includeIf] (only [include]), the per-worktree config
// (extensions.worktreeConfig), "~user/" and "%(prefix)/" paths. The
// system file is taken to be /etc/gitconfig; a git built with another
// prefix (Homebrew's, say) reads its own.

// excludesFile returns the path of the repository's global ignore file, ""
// when there is none. commonDir is the repository's common git directory
// (see gitCommonDir), top its worktree's top, against which git resolves a
// relative path.
func excludesFile(commonDir, top string) string {
	var c gitConfigKey
	c.name = "core.excludesfile"
	for _, f := range gitConfigFiles(commonDir) {
		c.readFile(f, 0)
	}
	c.readEnv()
	if !c.set {
		if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
			return filepath.Join(x, "git", "ignore")
		}
		if h := gitHome(); h != "" {
			return filepath.Join(h, ".config", "git", "ignore")
		}
		return ""
	}
	p, ok := expandGitPath(c.value)
	if !ok || p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(top, p)
	}
	return p
}

// gitHome is the home directory git uses: $HOME (on Windows, when unset,
// %USERPROFILE%).
func gitHome() string {
	if h := os.Getenv("HOME"); h != "" || runtime.GOOS != "windows" {
		return h
	}
	return os.Getenv("USERPROFILE")
}

// gitConfigFiles lists the config files git reads, lowest precedence first.
func gitConfigFiles(commonDir string) []string {
	var files []string
	if !gitEnvBool("GIT_CONFIG_NOSYSTEM") {
		if f, ok := os.LookupEnv("GIT_CONFIG_SYSTEM"); ok {
			files = append(files, f)
		} else {
			files = append(files, "/etc/gitconfig")
		}
	}
	if f, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		files = append(files, f)
	} else {
		if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
			files = append(files, filepath.Join(x, "git", "config"))
		} else if h := gitHome(); h != "" {
			files = append(files, filepath.Join(h, ".config", "git", "config"))
		}
		if h := gitHome(); h != "" {
			files = append(files, filepath.Join(h, ".gitconfig"))
		}
	}
	if commonDir != "" {
		files = append(files, filepath.Join(commonDir, "config"))
	}
	return files
}

// gitEnvBool reads a boolean environment variable as git does (unset or
// unreadable: false).
func gitEnvBool(name string) bool {
	v, ok := gitBool(os.Getenv(name))
	return ok && v
}

func gitBool(v string) (value, ok bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	n, err := strconv.Atoi(v)
	return n != 0, err == nil
}

// expandGitPath expands a leading "~/" (or a lone "~") as git does for a
// pathname value; ok is false for a form corvid does not expand.
func expandGitPath(p string) (string, bool) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, !strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "%(prefix)/")
	}
	h := gitHome()
	if h == "" {
		return "", false
	}
	return h + p[1:], true
}

// gitConfigKey collects the last value of one key (name: "section.key",
// lower case, no subsection) over config files.
type gitConfigKey struct {
	name  string
	value string
	set   bool
}

// readEnv applies GIT_CONFIG_COUNT's GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n
// pairs, which git reads after every file.
func (c *gitConfigKey) readEnv() {
	n, err := strconv.Atoi(os.Getenv("GIT_CONFIG_COUNT"))
	if err != nil {
		return
	}
	for i := range n {
		k, ok := os.LookupEnv("GIT_CONFIG_KEY_" + strconv.Itoa(i))
		if !ok {
			return
		}
		if strings.EqualFold(k, c.name) {
			c.value, c.set = os.Getenv("GIT_CONFIG_VALUE_"+strconv.Itoa(i)), true
		}
	}
}

// maxIncludeDepth is git's limit on nested [include]s.
const maxIncludeDepth = 10

// readFile applies one config file; a missing or malformed file changes
// nothing (git refuses to run with a malformed one).
func (c *gitConfigKey) readFile(path string, depth int) {
	data, err := os.ReadFile(path)
	if err != nil || depth > maxIncludeDepth {
		return
	}
	var found []gitConfigEntry
	if err := parseGitConfig(data, func(e gitConfigEntry) { found = append(found, e) }); err != nil {
		return
	}
	for _, e := range found {
		switch {
		case e.name == "include.path" && e.hasValue:
			inc, ok := expandGitPath(e.value)
			if !ok || inc == "" {
				continue
			}
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(path), inc)
			}
			c.readFile(inc, depth+1)
		case e.name == c.name:
			if e.hasValue {
				c.value, c.set = e.value, true
			}
		}
	}
}

// gitConfigEntry is one variable of a config file: its full name as git
// spells it after parsing ("section.key", "section.Sub.key"; section and
// key lower-cased, a quoted subsection as written) and its value.
type gitConfigEntry struct {
	name, value string
	hasValue    bool // false for a bare "key" line (git's boolean true)
}

var errGitConfig = errors.New("bad git config line")

// parseGitConfig calls fn for every variable of a git config file, in
// order, following git's parser (config.c: git_parse_source and its
// helpers); it fails where git reports a bad config line.
func parseGitConfig(data []byte, fn func(gitConfigEntry)) error {
	p := &gitConfigParser{data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))}
	var stem []byte // "section." of the current header, "" before any
	for {
		c := p.next()
		switch {
		case c == '\n':
			if p.eof {
				return nil
			}
		case isGitSpace(c):
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			name, err := p.header()
			if err != nil {
				return err
			}
			stem = append(name, '.')
		case isGitAlpha(c):
			name := append(append([]byte(nil), stem...), lowerASCII(c))
			e, err := p.variable(name)
			if err != nil {
				return err
			}
			fn(e)
		default:
			return errGitConfig
		}
	}
}

// gitConfigParser reads a config file byte by byte as git's get_next_char
// does: "\r\n" reads as "\n", and the end of the data as a "\n" with eof set.
type gitConfigParser struct {
	data []byte
	i    int
	eof  bool
}

func (p *gitConfigParser) next() byte {
	if p.i >= len(p.data) {
		p.eof = true
		return '\n'
	}
	c := p.data[p.i]
	p.i++
	if c == '\r' && p.i < len(p.data) && p.data[p.i] == '\n' {
		p.i++
		return '\n'
	}
	return c
}

func (p *gitConfigParser) skipLine() {
	for p.next() != '\n' {
	}
}

// header reads a section header after its '[': "[name]", the deprecated
// "[name.sub]" (all lower-cased) or "[name "sub"]" (the subsection as
// written, with backslash escapes removed). It returns "name" or "name.sub".
func (p *gitConfigParser) header() ([]byte, error) {
	var name []byte
	for {
		c := p.next()
		switch {
		case p.eof:
			return nil, errGitConfig
		case c == ']':
			if len(name) == 0 {
				return nil, errGitConfig
			}
			return name, nil
		case isGitSpace(c):
			return p.subsection(name, c)
		case isGitAlnum(c) || c == '-' || c == '.':
			name = append(name, lowerASCII(c))
		default:
			return nil, errGitConfig
		}
	}
}

// subsection reads the rest of `[name "sub"]` from the blank c after name.
func (p *gitConfigParser) subsection(name []byte, c byte) ([]byte, error) {
	for {
		if c == '\n' {
			return nil, errGitConfig
		}
		if c = p.next(); !isGitSpace(c) {
			break
		}
	}
	if c != '"' {
		return nil, errGitConfig
	}
	name = append(name, '.')
	for {
		c := p.next()
		if c == '\n' {
			return nil, errGitConfig
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return nil, errGitConfig
			}
		}
		name = append(name, c)
	}
	if p.next() != ']' || len(name) == 0 {
		return nil, errGitConfig
	}
	return name, nil
}

// variable reads the rest of "key [= value]" after the key's first
// character (already in name).
func (p *gitConfigParser) variable(name []byte) (gitConfigEntry, error) {
	var c byte
	for {
		c = p.next()
		if p.eof || !isGitAlnum(c) && c != '-' {
			break
		}
		name = append(name, lowerASCII(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	e := gitConfigEntry{name: string(name)}
	if c == '\n' {
		return e, nil
	}
	if c != '=' {
		return e, errGitConfig
	}
	v, err := p.value()
	e.value, e.hasValue = v, true
	return e, err
}

// value reads a value after its '=' to the end of its line (parse_value):
// surrounding blanks dropped, each blank inside kept as a space, quotes
// removed, the escapes \" \\ \n \t \b and line continuations applied, a
// comment cut.
func (p *gitConfigParser) value() (string, error) {
	var out []byte
	quote, comment, spaces := false, false, 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", errGitConfig
			}
			return string(out), nil
		}
		if comment {
			continue
		}
		if !quote && isGitSpace(c) {
			if len(out) > 0 {
				spaces++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			out = append(out, ' ')
		}
		switch c {
		case '\\':
			switch c = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", errGitConfig
			}
			out = append(out, c)
		case '"':
			quote = !quote
		default:
			out = append(out, c)
		}
	}
}

// isGitSpace is git's isspace (git-compat-util.h): only ' ', '\t', '\n'
// and '\r', not C's '\v' and '\f'.
func isGitSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func isGitAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func isGitAlnum(c byte) bool { return isGitAlpha(c) || '0' <= c && c <= '9' }

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
