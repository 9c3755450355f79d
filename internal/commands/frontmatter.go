package commands

import (
	"fmt"
	"strings"
)

// frontMatter is the parsed header of a command or skill file: simple
// "key: value" pairs, keys lower-cased.
type frontMatter map[string]string

// splitFrontMatter separates a "---" header from the body. A file without a
// header is all body. Problems are reported as warnings, never as a failure:
// a line that is not "key: value" is skipped, and a header that is never
// closed is treated as body.
//
// Besides "key: value" it accepts the few YAML shapes people actually write
// in these headers: quoted values, a block scalar ("key: >" or "key: |"
// followed by indented lines) and a block list ("key:" followed by "- item"
// lines). Nested maps (e.g. "metadata:" with indented "k: v") are ignored.
func splitFrontMatter(text string) (fm frontMatter, body string, warnings []string) {
	text = strings.TrimPrefix(text, "\uFEFF")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	fm = frontMatter{}
	if !strings.HasPrefix(text, "---\n") && text != "---" {
		return fm, text, nil
	}
	rest := strings.TrimPrefix(text, "---")
	rest = strings.TrimPrefix(rest, "\n")
	var header string
	switch {
	case strings.HasPrefix(rest, "---\n") || rest == "---":
		header, body = "", strings.TrimPrefix(strings.TrimPrefix(rest, "---"), "\n")
	default:
		end := strings.Index(rest, "\n---\n")
		if end < 0 {
			if strings.HasSuffix(rest, "\n---") {
				end = len(rest) - len("\n---")
			} else {
				return fm, text, []string{"front matter is not closed by a \"---\" line; the whole file is used as the body"}
			}
		}
		header = rest[:end]
		body = strings.TrimPrefix(rest[end+len("\n---"):], "\n")
	}

	lines := strings.Split(header, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			// Indented line outside a block we understand: part of a
			// nested value we ignore.
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		key = strings.ToLower(strings.TrimSpace(key))
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			warnings = append(warnings, fmt.Sprintf("front matter line %d is not \"key: value\": %q", i+2, trimmed))
			continue
		}
		value = strings.TrimSpace(value)
		// Collect the indented lines that belong to this key.
		var block []string
		for i+1 < len(lines) {
			next := lines[i+1]
			if strings.TrimSpace(next) != "" && next[0] != ' ' && next[0] != '\t' && !strings.HasPrefix(next, "- ") {
				break
			}
			block = append(block, next)
			i++
		}
		switch {
		case value == "" && len(block) > 0:
			value = blockList(block)
		case isBlockScalar(value):
			value = blockScalar(value, block)
		default:
			value = unquote(stripComment(value))
		}
		fm[key] = value
	}
	return fm, body, warnings
}

// isBlockScalar reports whether v introduces a YAML block scalar (|, >, |-, >+ ...).
func isBlockScalar(v string) bool {
	if v == "" || (v[0] != '|' && v[0] != '>') {
		return false
	}
	return strings.Trim(v[1:], "+-0123456789") == ""
}

// blockScalar joins the indented lines of a block scalar: "|" keeps line
// breaks, ">" folds them into spaces.
func blockScalar(indicator string, block []string) string {
	var parts []string
	for _, l := range block {
		parts = append(parts, strings.TrimSpace(l))
	}
	if indicator[0] == '|' {
		return strings.TrimSpace(strings.Join(parts, "\n"))
	}
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			b.WriteString("\n")
			continue
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString(" ")
		}
		b.WriteString(p)
	}
	return strings.TrimSpace(b.String())
}

// blockList turns "- a" lines into "a, b" so list() reads it like an inline
// list. Lines that are not list items (a nested map) give "".
func blockList(block []string) string {
	var items []string
	for _, l := range block {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		item, ok := strings.CutPrefix(t, "- ")
		if !ok {
			if t == "-" {
				continue
			}
			return ""
		}
		items = append(items, unquote(strings.TrimSpace(item)))
	}
	return strings.Join(items, ", ")
}

// stripComment drops a trailing " # comment" from an unquoted value.
func stripComment(v string) string {
	if v == "" || v[0] == '"' || v[0] == '\'' {
		return v
	}
	if i := strings.Index(v, " #"); i >= 0 {
		return strings.TrimSpace(v[:i])
	}
	return v
}

// unquote removes matching surrounding quotes.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		inner := v[1 : len(v)-1]
		if v[0] == '"' {
			inner = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, "\n", `\t`, "\t").Replace(inner)
		} else {
			inner = strings.ReplaceAll(inner, "''", "'")
		}
		return inner
	}
	return v
}

// list reads "a, b", "[a, b]" or "a b" (tool lists are often written with
// spaces) into its items. Without commas, a value holding parentheses
// ("shell(git status)") is one item.
func (fm frontMatter) list(key string) []string {
	v := strings.TrimSpace(fm[key])
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		v = v[1 : len(v)-1]
	}
	var sep func(rune) bool
	switch {
	case strings.Contains(v, ","):
		sep = func(r rune) bool { return r == ',' }
	case strings.Contains(v, "("):
		sep = func(rune) bool { return false }
	default:
		sep = func(r rune) bool { return r == ' ' || r == '\t' }
	}
	var out []string
	for _, f := range strings.FieldsFunc(v, sep) {
		if f = unquote(strings.TrimSpace(f)); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// bool reads a YAML-ish boolean; anything unrecognised is false.
func (fm frontMatter) bool(key string) bool {
	switch strings.ToLower(strings.TrimSpace(fm[key])) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}
