// Package commands finds and expands slash commands and skills: the
// built-ins corvid executes itself (Builtins), custom commands written as
// markdown files, and skills (SKILL.md folders) the model loads on demand.
//
// Start with Discover, which reads every command and skill folder for a
// working directory; then Parse (is a prompt "/name args"?) and Expand (fill
// $ARGUMENTS and $1…$9 into a custom command's body). Watch polls the same
// folders so the front end can re-push the list when it changes, and
// SkillTool is the "skill" tool through which the model loads a skill.
//
// Each built-in (compact, clear, init, review, help; builtin.go) carries
// its handler, which acts through the small Host interface the agent
// implements; otherwise the package reads files only.
package commands

import (
	"strings"
	"unicode"
)

// Sources of a Command.
const (
	SourceBuiltin = "builtin"
	SourceProject = "project"
	SourceUser    = "user"
	SourceSkill   = "skill"
	SourceMCP     = "mcp"
)

// Command is one slash command as the front end lists it.
type Command struct {
	Name         string // without the slash; a subfolder gives "folder:name"
	Description  string
	ArgumentHint string // e.g. "focus"; "" when the command takes no input
	Source       string // SourceBuiltin, SourceProject, SourceUser, SourceSkill or SourceMCP
	Path         string // the markdown file (SKILL.md for a skill); "" for a built-in
	Body         string // the prompt template, front matter removed; "" for a built-in
	Model        string // front matter "model": run this command with that model
	AllowedTools []string
}

// Skill is a folder of instructions the model can load by name.
type Skill struct {
	Name         string
	Description  string
	Path         string // the SKILL.md file
	Dir          string // the folder holding it
	AllowedTools []string
}

// Parse recognises a slash command at the start of a prompt: "/name args"
// gives name and args (trimmed; line breaks inside args are kept). Leading
// blank space is ignored. Text such as "/usr/bin is missing" is not a
// command: a name holds only letters, digits and - _ . :
func Parse(text string) (name, args string, ok bool) {
	text = strings.TrimLeftFunc(text, unicode.IsSpace)
	rest, found := strings.CutPrefix(text, "/")
	if !found {
		return "", "", false
	}
	end := strings.IndexFunc(rest, unicode.IsSpace)
	if end < 0 {
		end = len(rest)
	}
	name = rest[:end]
	if !validName(name) {
		return "", "", false
	}
	return name, strings.TrimSpace(rest[end:]), true
}

// validName reports whether s can name a command.
func validName(s string) bool {
	if s == "" || strings.HasPrefix(s, ":") || strings.HasSuffix(s, ":") {
		return false
	}
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.' || r == ':') {
			return false
		}
	}
	return true
}

// Expand fills a custom command's body with the user's arguments:
// $ARGUMENTS becomes args as typed (trimmed), $1…$9 the positional
// arguments after shell-like splitting (quotes group words; a missing one
// is ""). A body with no placeholder gets non-empty args appended after a
// blank line, so input is never silently dropped.
func Expand(c Command, args string) string {
	args = strings.TrimSpace(args)
	body := c.Body
	positional := SplitArgs(args)
	var b strings.Builder
	used := false
	for i := 0; i < len(body); i++ {
		if body[i] != '$' {
			b.WriteByte(body[i])
			continue
		}
		rest := body[i+1:]
		switch {
		case strings.HasPrefix(rest, "ARGUMENTS"):
			b.WriteString(args)
			i += len("ARGUMENTS")
			used = true
		case len(rest) > 0 && rest[0] >= '1' && rest[0] <= '9':
			if n := int(rest[0] - '1'); n < len(positional) {
				b.WriteString(positional[n])
			}
			i++
			used = true
		default:
			b.WriteByte('$')
		}
	}
	out := b.String()
	if !used && args != "" {
		out = strings.TrimRight(out, "\n") + "\n\n" + args
	}
	return out
}

// SplitArgs splits args like a POSIX shell would, without expansion:
// whitespace separates words, single quotes keep everything literally,
// double quotes keep spaces and honour \" and \\ (other backslashes stay),
// and a backslash outside quotes escapes the next character. An unclosed quote runs to the end.
func SplitArgs(args string) []string {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
		quote  rune // 0, '\'' or '"'
		escape rune // 0, or the quote the pending backslash was read in (' ' outside quotes)
	)
	for _, r := range args {
		switch {
		case escape == '"':
			if r != '"' && r != '\\' {
				cur.WriteRune('\\')
			}
			cur.WriteRune(r)
			escape = 0
		case escape != 0:
			cur.WriteRune(r)
			escape = 0
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escape = '"'
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			escape, inWord = ' ', true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if escape != 0 { // a trailing backslash stays
		cur.WriteRune('\\')
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
