package jsonschema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Violation is one way an instance fails its schema.
type Violation struct {
	InstancePath string // JSON pointer into the instance; "" is the whole instance
	SchemaPath   string // "#" + JSON pointer of the failing keyword in the schema document
	Message      string
}

func (v Violation) String() string {
	at := v.InstancePath
	if at == "" {
		at = "(root)"
	}
	return fmt.Sprintf("%s: %s [%s]", at, v.Message, v.SchemaPath)
}

// ValidationError lists the first violations of an invalid instance, in a deterministic order.
type ValidationError struct {
	Def        string // the $defs name validated against
	Violations []Violation
	Truncated  bool // more violations were found than are listed
}

// Error renders one violation a line, without the $defs name, which callers usually add.
func (e *ValidationError) Error() string {
	lines := make([]string, 0, len(e.Violations)+1)
	for _, v := range e.Violations {
		lines = append(lines, v.String())
	}
	if e.Truncated {
		lines = append(lines, "(further violations omitted)")
	}
	return strings.Join(lines, "\n")
}

// explainNoMatch reports why no alternative of an anyOf or oneOf matched. Listing every
// alternative's failures would bury the one that matters, so it narrows the alternatives the
// way a reader would: by the discriminating constants they require (ACP's tagged unions, such
// as "type": "text") and by the JSON types they accept (the anyOf [X, null] of optional
// members). If exactly one alternative is left, its own violations are the report.
func (c *checker) explainNoMatch(n *node, keyword string, alts []*node, v any) {
	if !c.collect {
		return
	}
	if obj, isObj := v.(map[string]any); isObj {
		var tagged []*node
		for _, alt := range alts {
			if tagMatches(alt, obj) {
				tagged = append(tagged, alt)
			}
		}
		if len(tagged) == 1 {
			c.valid(tagged[0], v)
			return
		}
		if prop, want := tagConstants(alts); prop != "" {
			if got, present := obj[prop]; present && !inEnum(got, want) {
				c.fail(n, keyword, "%q is %s, want one of %s", prop, brief(got), briefList(want))
				return
			}
		}
	}
	var typed []*node
	for _, alt := range alts {
		if mayAcceptType(alt, v, 0) {
			typed = append(typed, alt)
		}
	}
	if len(typed) == 1 {
		c.valid(typed[0], v)
		return
	}
	if consts := constAlternatives(alts); consts != nil {
		c.fail(n, keyword, "got %s, want one of %s", brief(v), briefList(consts))
		return
	}
	c.fail(n, keyword, "matches none of the %d alternatives", len(alts))
}

// tagMatches reports whether alt declares at least one property with a const, and obj has
// every such property with that value.
func tagMatches(alt *node, obj map[string]any) bool {
	found := false
	for name, p := range alt.props {
		if !p.hasConst {
			continue
		}
		found = true
		if got, present := obj[name]; !present || !jsonEqual(got, p.constVal) {
			return false
		}
	}
	return found
}

// tagConstants returns the property that alternatives discriminate on and its known values,
// or "" when they do not share one.
func tagConstants(alts []*node) (string, []any) {
	prop := ""
	var values []any
	for _, alt := range alts {
		for _, name := range alt.propNames {
			p := alt.props[name]
			if !p.hasConst {
				continue
			}
			if prop != "" && name != prop {
				return "", nil
			}
			prop = name
			values = append(values, p.constVal)
		}
	}
	return prop, values
}

// constAlternatives returns the constants when every alternative is a const (string enums).
func constAlternatives(alts []*node) []any {
	var out []any
	for _, alt := range alts {
		if !alt.hasConst {
			return nil
		}
		out = append(out, alt.constVal)
	}
	return out
}

// mayAcceptType reports whether n could accept a value of v's JSON type, judging only by
// `type` and `const` through in-place applicators.
func mayAcceptType(n *node, v any, depth int) bool {
	if depth > 32 {
		return true
	}
	if n.reject {
		return false
	}
	if n.types != 0 {
		var num decimal
		if text, ok := v.(json.Number); ok {
			num, _ = parseDecimal(string(text))
		}
		if !typeMatches(n.types, v, num) {
			return false
		}
	}
	if n.hasConst && jsonTypeName(n.constVal) != jsonTypeName(v) {
		return false
	}
	if n.ref != nil && !mayAcceptType(n.ref, v, depth+1) {
		return false
	}
	for _, sub := range n.allOf {
		if !mayAcceptType(sub, v, depth+1) {
			return false
		}
	}
	for _, alts := range [][]*node{n.anyOf, n.oneOf} {
		if alts != nil && !slices.ContainsFunc(alts, func(a *node) bool { return mayAcceptType(a, v, depth+1) }) {
			return false
		}
	}
	return true
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// instanceType names v's type the way the type keyword does, telling integers apart.
func instanceType(v any) string {
	if text, ok := v.(json.Number); ok {
		if num, ok := parseDecimal(string(text)); ok && num.isInteger() {
			return "integer"
		}
	}
	return jsonTypeName(v)
}

func maskNames(m typeMask) string {
	var names []string
	for _, t := range typeNames {
		if m&t.mask != 0 {
			names = append(names, t.name)
		}
	}
	return strings.Join(names, " or ")
}

// brief renders a value for a message, cut short so a large instance cannot flood a report.
func brief(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return jsonTypeName(v)
	}
	if limit := 60; len(b) > limit {
		for !utf8.RuneStart(b[limit]) {
			limit--
		}
		return string(b[:limit]) + "…"
	}
	return string(b)
}

func briefList(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = brief(v)
	}
	return strings.Join(parts, ", ")
}

func sortedKeysOf(keys []string) []string {
	slices.Sort(keys)
	return keys
}
