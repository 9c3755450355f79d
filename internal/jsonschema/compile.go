package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
)

// Schema is a compiled schema document. It is immutable once Compile returns.
type Schema struct {
	defs map[string]*node // #/$defs/<name> → its node
}

// typeMask is a set of JSON types; integer is a subset of number.
type typeMask uint8

const (
	typeNull typeMask = 1 << iota
	typeBoolean
	typeObject
	typeArray
	typeNumber
	typeInteger
	typeString
)

var typeNames = []struct {
	name string
	mask typeMask
}{
	{"null", typeNull}, {"boolean", typeBoolean}, {"object", typeObject}, {"array", typeArray},
	{"number", typeNumber}, {"integer", typeInteger}, {"string", typeString},
}

// node is one compiled (sub)schema. A nil *node field means the keyword is absent or a
// schema that accepts everything, so the validator never visits it.
type node struct {
	loc string // "#" + JSON pointer of this schema in the document, for error messages

	reject bool // the schema `false`

	refText string
	ref     *node

	types typeMask // 0: any type

	props      map[string]*node
	propNames  []string // sorted keys of props, for deterministic errors
	required   []string // schema order
	additional *node

	items *node

	allOf, anyOf, oneOf []*node
	not                 *node

	enum     []any
	hasEnum  bool
	constVal any
	hasConst bool

	format           *numericFormat
	minimum, maximum *decimal
	minLength        int // -1: absent

	needsNumber bool // some keyword here needs a number's parsed value
}

// Compile parses a JSON Schema 2020-12 document and compiles every subschema, resolving each
// $ref. It fails on any keyword outside the supported subset (see the package comment), on a
// $ref that does not resolve, and on a $ref loop that never descends into the instance.
func Compile(schemaJSON []byte) (*Schema, error) {
	doc, err := decodeJSON(schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	c := &compiler{byLoc: map[string]*node{}}
	if _, err := c.compile(doc, "#"); err != nil {
		return nil, err
	}
	for _, n := range c.all {
		if n.refText == "" {
			continue
		}
		target, err := refLocation(n.refText)
		if err != nil {
			return nil, fmt.Errorf("%s/$ref: %w", n.loc, err)
		}
		if n.ref = c.byLoc[target]; n.ref == nil {
			return nil, fmt.Errorf("%s/$ref: %q does not name a schema in this document", n.loc, n.refText)
		}
	}
	if err := checkRefLoops(c.all); err != nil {
		return nil, err
	}
	s := &Schema{defs: map[string]*node{}}
	prefix := "#/$defs/"
	for loc, n := range c.byLoc {
		if name, ok := strings.CutPrefix(loc, prefix); ok && !strings.Contains(name, "/") {
			s.defs[unescapeToken(name)] = n
		}
	}
	return s, nil
}

// decodeJSON decodes exactly one JSON value, keeping numbers as json.Number.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

type compiler struct {
	byLoc map[string]*node
	all   []*node
}

// isAnnotation reports whether keyword k never affects validity. (A switch rather than a
// package-level map, so that linking the package runs no init code.)
func isAnnotation(k string) bool {
	switch k {
	case "$comment", "title", "description", "default", "examples", "deprecated", "readOnly",
		"writeOnly", "discriminator":
		return true
	}
	return strings.HasPrefix(k, "x-")
}

const draft202012 = "https://json-schema.org/draft/2020-12/schema"

func (c *compiler) compile(v any, loc string) (*node, error) {
	n := &node{loc: loc, minLength: -1}
	c.byLoc[loc] = n
	c.all = append(c.all, n)
	switch v := v.(type) {
	case bool:
		n.reject = !v
		return n, nil
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if err := c.keyword(n, k, v[k]); err != nil {
				return nil, fmt.Errorf("%s/%s: %w", loc, escapeToken(k), err)
			}
		}
		integerOnly := n.types&typeInteger != 0 && n.types&typeNumber == 0
		n.needsNumber = integerOnly || n.format != nil || n.minimum != nil || n.maximum != nil
		return n, nil
	default:
		return nil, fmt.Errorf("%s: a schema must be an object or a boolean, not %s", loc, jsonTypeName(v))
	}
}

// sub compiles a subschema and returns nil when it accepts everything, so validation skips it.
func (c *compiler) sub(v any, loc string) (*node, error) {
	n, err := c.compile(v, loc)
	if err != nil || n.acceptsAll() {
		return nil, err
	}
	return n, nil
}

func (c *compiler) subList(v any, loc string) ([]*node, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, errors.New("must be a non-empty array of schemas")
	}
	out := make([]*node, len(list))
	for i, item := range list {
		n, err := c.compile(item, fmt.Sprintf("%s/%d", loc, i))
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func (c *compiler) keyword(n *node, k string, v any) error {
	if isAnnotation(k) {
		return nil
	}
	loc := n.loc + "/" + escapeToken(k)
	var err error
	switch k {
	case "$schema":
		if n.loc != "#" || v != draft202012 {
			return fmt.Errorf("only %s is supported at the document root", draft202012)
		}
	case "$defs":
		return c.defs(v, loc)
	case "$ref":
		s, ok := v.(string)
		if !ok {
			return errors.New("must be a string")
		}
		n.refText = s
	case "type":
		n.types, err = parseTypes(v)
	case "properties":
		return c.properties(n, v, loc)
	case "required":
		return n.setRequired(v)
	case "additionalProperties", "items", "allOf", "anyOf", "oneOf", "not":
		return c.applicator(n, k, v, loc)
	case "enum", "const", "format", "minimum", "maximum", "minLength":
		return n.valueKeyword(k, v)
	case "unevaluatedProperties":
		// Only `true` is supported: it asserts nothing, so no annotation tracking is needed.
		if v != true {
			return errors.New("only the value true is supported")
		}
	default:
		return errors.New("unsupported keyword")
	}
	return err
}

// defs compiles every schema of $defs, so each can be referred to.
func (c *compiler) defs(v any, loc string) error {
	defs, ok := v.(map[string]any)
	if !ok {
		return errors.New("must be an object")
	}
	for _, name := range sortedKeys(defs) {
		if _, err := c.compile(defs[name], loc+"/"+escapeToken(name)); err != nil {
			return err
		}
	}
	return nil
}

func (c *compiler) properties(n *node, v any, loc string) error {
	props, ok := v.(map[string]any)
	if !ok {
		return errors.New("must be an object")
	}
	n.props = map[string]*node{}
	n.propNames = sortedKeys(props)
	for _, name := range n.propNames {
		pn, err := c.compile(props[name], loc+"/"+escapeToken(name))
		if err != nil {
			return err
		}
		n.props[name] = pn
	}
	return nil
}

func (n *node) setRequired(v any) error {
	list, ok := v.([]any)
	if !ok {
		return errors.New("must be an array of strings")
	}
	for _, r := range list {
		s, ok := r.(string)
		if !ok {
			return errors.New("must be an array of strings")
		}
		n.required = append(n.required, s)
	}
	return nil
}

// applicator compiles a keyword whose value is a schema or a list of them.
func (c *compiler) applicator(n *node, k string, v any, loc string) error {
	var err error
	switch k {
	case "additionalProperties":
		n.additional, err = c.sub(v, loc)
	case "items":
		n.items, err = c.sub(v, loc)
	case "allOf":
		n.allOf, err = c.subList(v, loc)
	case "anyOf":
		n.anyOf, err = c.subList(v, loc)
	case "oneOf":
		n.oneOf, err = c.subList(v, loc)
	case "not":
		n.not, err = c.compile(v, loc)
	}
	return err
}

// valueKeyword records a keyword that constrains the value itself.
func (n *node) valueKeyword(k string, v any) error {
	switch k {
	case "enum":
		list, ok := v.([]any)
		if !ok {
			return errors.New("must be an array")
		}
		n.enum, n.hasEnum = list, true
	case "const":
		n.constVal, n.hasConst = v, true
	case "format":
		s, ok := v.(string)
		if !ok {
			return errors.New("must be a string")
		}
		n.format, _ = lookupNumericFormat(s) // other formats are annotations
	case "minimum", "maximum":
		num, ok := v.(json.Number)
		d, ok2 := parseDecimal(string(num))
		if !ok || !ok2 {
			return errors.New("must be a number")
		}
		if k == "minimum" {
			n.minimum = &d
		} else {
			n.maximum = &d
		}
	case "minLength":
		num, ok := v.(json.Number)
		d, ok2 := parseDecimal(string(num))
		if !ok || !ok2 || !d.isInteger() || d.neg || d.exp > 9 {
			return errors.New("must be a small non-negative integer")
		}
		n.minLength = int(d.int64())
	}
	return nil
}

func (n *node) acceptsAll() bool {
	return !n.reject && n.refText == "" && n.types == 0 && n.props == nil && n.required == nil &&
		n.additional == nil && n.items == nil && n.allOf == nil && n.anyOf == nil &&
		n.oneOf == nil && n.not == nil && !n.hasEnum && !n.hasConst && n.format == nil &&
		n.minimum == nil && n.maximum == nil && n.minLength < 0
}

// int64 converts a small non-negative integer decimal (checked by the caller).
func (d decimal) int64() int64 {
	var x int64
	for i := int64(0); i < d.exp; i++ {
		x *= 10
		if i < int64(len(d.digits)) {
			x += int64(d.digits[i] - '0')
		}
	}
	return x
}

func parseTypes(v any) (typeMask, error) {
	var names []any
	switch v := v.(type) {
	case string:
		names = []any{v}
	case []any:
		names = v
	default:
		return 0, errors.New("must be a string or an array of strings")
	}
	var m typeMask
	for _, name := range names {
		i := slices.IndexFunc(typeNames, func(t struct {
			name string
			mask typeMask
		}) bool {
			return t.name == name
		})
		if i < 0 {
			return 0, fmt.Errorf("unknown type %v", name)
		}
		m |= typeNames[i].mask
	}
	if m == 0 {
		return 0, errors.New("must name at least one type")
	}
	return m, nil
}

// refLocation turns a $ref into the "#"+pointer key of byLoc. Only references inside this
// document are supported; the schema has no $id, so there is nothing else to resolve against.
func refLocation(ref string) (string, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return "", fmt.Errorf("%q: only references within the document (#...) are supported", ref)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return "", fmt.Errorf("%q: %w", ref, err)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return "", fmt.Errorf("%q: anchors are not supported", ref)
	}
	return "#" + frag, nil
}

// checkRefLoops rejects a cycle of in-place applicators ($ref, allOf, anyOf, oneOf, not):
// such a cycle would recurse forever on any instance. Cycles through properties or items are
// fine, because each step descends into a finite instance.
func checkRefLoops(all []*node) error {
	const (
		unvisited = iota
		active
		done
	)
	state := map[*node]int{}
	var visit func(n *node) error
	visit = func(n *node) error {
		switch state[n] {
		case active:
			return fmt.Errorf("%s: $ref loop that never descends into the instance", n.loc)
		case done:
			return nil
		}
		state[n] = active
		next := slices.Concat(n.allOf, n.anyOf, n.oneOf)
		if n.ref != nil {
			next = append(next, n.ref)
		}
		if n.not != nil {
			next = append(next, n.not)
		}
		for _, m := range next {
			if err := visit(m); err != nil {
				return err
			}
		}
		state[n] = done
		return nil
	}
	for _, n := range all {
		if err := visit(n); err != nil {
			return err
		}
	}
	return nil
}

// escapeToken escapes one JSON pointer reference token (RFC 6901).
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescapeToken(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
