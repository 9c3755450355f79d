package commands

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v4"
)

// frontMatter is the parsed header of a command or skill file: simple
// "key: value" pairs, keys lower-cased.
type frontMatter map[string]string

// splitFrontMatter separates a "---" header from the body. A file without a
// header is all body. Problems are reported as warnings, never as a failure:
// a line that is not "key: value" is skipped, and a header that is never
// closed is treated as body.
//
// A header that is valid YAML is parsed in one pass; otherwise each top-level
// entry is parsed as YAML (quoted values, comments, block
// scalars "key: >" and "key: |", block and flow lists); an entry that is not
// valid YAML is read as "key: text". Nested maps (e.g. "metadata:" with
// indented "k: v") give "".
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

	if whole, ok := parseHeader(header); ok {
		return whole, body, nil
	}
	lines := strings.Split(header, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || line[0] == ' ' || line[0] == '\t' {
			// Blank, a comment, or indented outside any entry (a nested value we ignore).
			continue
		}
		// An entry is a top-level line and the indented or "- item" lines that follow it.
		first := i
		for i+1 < len(lines) {
			next := lines[i+1]
			if strings.TrimSpace(next) != "" && next[0] != ' ' && next[0] != '\t' && !strings.HasPrefix(next, "- ") {
				break
			}
			i++
		}
		key, value, ok := parseEntry(lines[first : i+1])
		if !ok {
			warnings = append(warnings, fmt.Sprintf("front matter line %d is not \"key: value\": %q", first+2, trimmed))
			continue
		}
		fm[key] = value
	}
	return fm, body, warnings
}

// parseHeader reads a header that is valid YAML, a map with simple keys, in one pass.
func parseHeader(header string) (frontMatter, bool) {
	var doc yaml.Node
	if strings.TrimSpace(header) == "" || yaml.Unmarshal([]byte(header), &doc) != nil ||
		len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, false
	}
	fm := frontMatter{}
	pairs := doc.Content[0].Content
	for i := 0; i+1 < len(pairs); i += 2 {
		key := strings.ToLower(strings.TrimSpace(pairs[i].Value))
		if pairs[i].Kind != yaml.ScalarNode || key == "" || strings.ContainsAny(key, " \t") {
			return nil, false
		}
		fm[key] = nodeText(pairs[i+1])
	}
	return fm, true
}

// parseEntry reads one top-level "key: value" entry with the YAML parser. The value
// becomes a string: a scalar's text (a block scalar trimmed), a block list "a, b", a flow
// list "[a, b]", a nested map "". Headers are written by hand and are often not strict
// YAML ("description: Use when: ..."), so an entry YAML rejects falls back to the text
// after the first colon.
func parseEntry(entry []string) (key, value string, ok bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(entry, "\n")), &doc); err == nil &&
		len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode && len(doc.Content[0].Content) == 2 {
		k, v := doc.Content[0].Content[0], doc.Content[0].Content[1]
		key = strings.ToLower(strings.TrimSpace(k.Value))
		if k.Kind != yaml.ScalarNode || key == "" || strings.ContainsAny(key, " \t") {
			return "", "", false
		}
		return key, nodeText(v), true
	}
	k, v, ok := strings.Cut(entry[0], ":")
	key = strings.ToLower(strings.TrimSpace(k))
	if !ok || key == "" || strings.ContainsAny(key, " \t") {
		return "", "", false
	}
	return key, strings.TrimSpace(v), true
}

// nodeText renders a value node as the string the header readers (list, bool) expect.
func nodeText(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return strings.TrimSpace(n.Value)
	case yaml.SequenceNode:
		var items []string
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode {
				items = append(items, c.Value)
			}
		}
		if n.Style&yaml.FlowStyle != 0 {
			return "[" + strings.Join(items, ", ") + "]"
		}
		return strings.Join(items, ", ")
	case yaml.AliasNode:
		return nodeText(n.Alias)
	}
	return "" // a nested map: not a value these headers use
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

// unquote removes matching surrounding quotes from a list item written inline
// ("read, 'shell'"), which YAML reads as one plain string.
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
