package jsonschema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxViolations bounds how many violations one ValidationError reports; past the first few,
// further ones are usually consequences of the same mistake.
const maxViolations = 8

// Validate checks instance, a single JSON value, against #/$defs/<def>. It returns a
// *ValidationError when the instance is well-formed JSON but invalid, and another error when
// def is unknown or instance is not JSON.
func (s *Schema) Validate(def string, instance []byte) error {
	n, ok := s.defs[def]
	if !ok {
		return fmt.Errorf("jsonschema: no $defs/%s in the schema", def)
	}
	v, err := decodeJSON(instance)
	if err != nil {
		return fmt.Errorf("jsonschema: decode instance: %w", err)
	}
	c := checker{collect: true}
	if c.valid(n, v) {
		return nil
	}
	return &ValidationError{Def: def, Violations: c.out, Truncated: c.dropped}
}

// checker walks a schema and an instance together. With collect false it answers only
// valid/invalid and stops at the first failure (the mode anyOf, oneOf and not branches use);
// with collect true it records violations, up to maxViolations.
type checker struct {
	collect bool
	path    []pathToken // where in the instance the check is; a stack, so it costs no allocation per member
	out     []Violation
	dropped bool
}

// fail records a violation at the current instance path. Callers test c.collect first, so
// that a quiet check never pays for formatting its arguments.
func (c *checker) fail(n *node, keyword string, format string, args ...any) {
	if len(c.out) >= maxViolations {
		c.dropped = true
		return
	}
	schemaPath := n.loc
	if keyword != "" {
		schemaPath += "/" + keyword
	}
	c.out = append(c.out, Violation{
		InstancePath: c.pointer(),
		SchemaPath:   schemaPath,
		Message:      fmt.Sprintf(format, args...),
	})
}

// done reports whether checking can stop after a failure: a quiet check needs only one, and
// a collecting one stops at the first violation past a full report, which it can then say
// exists.
func (c *checker) done() bool {
	return !c.collect || c.dropped
}

// quiet runs n against v without recording violations.
func (c *checker) quiet(n *node, v any) bool {
	saved := c.collect
	c.collect = false
	ok := c.valid(n, v)
	c.collect = saved
	return ok
}

func (c *checker) valid(n *node, v any) bool {
	if n.reject {
		if c.collect {
			c.fail(n, "", "no value is allowed here")
		}
		return false
	}
	// A number's text is parsed once per node visit, and only when a keyword needs its value.
	var num decimal
	if text, isNum := v.(json.Number); isNum && n.needsNumber {
		var ok bool
		if num, ok = parseDecimal(string(text)); !ok {
			if c.collect {
				c.fail(n, "", "malformed number %s", text)
			}
			return false
		}
	}
	if n.types != 0 && !typeMatches(n.types, v, num) {
		if c.collect {
			c.fail(n, "type", "got %s, want %s", instanceType(v), maskNames(n.types))
		}
		return false // later keywords would only report noise about the wrong type
	}
	ok := c.validValue(n, v, num)
	if !ok && c.done() {
		return false
	}
	return c.validApplicators(n, v) && ok
}

// validValue checks the keywords about v itself: const, enum and those of
// its type. It stops at the first failure unless every one is collected.
func (c *checker) validValue(n *node, v any, num decimal) bool {
	ok := true
	if n.hasConst && !jsonEqual(v, n.constVal) {
		if c.collect {
			c.fail(n, "const", "got %s, want %s", brief(v), brief(n.constVal))
		}
		if ok = false; c.done() {
			return false
		}
	}
	if n.hasEnum && !inEnum(v, n.enum) {
		if c.collect {
			c.fail(n, "enum", "got %s, want one of %s", brief(v), briefList(n.enum))
		}
		if ok = false; c.done() {
			return false
		}
	}
	var typeOK bool
	switch v := v.(type) {
	case json.Number:
		typeOK = c.validNumber(n, v, num)
	case string:
		typeOK = c.validString(n, v)
	case map[string]any:
		typeOK = c.validObject(n, v)
	case []any:
		typeOK = c.validArray(n, v)
	default:
		typeOK = true
	}
	return typeOK && ok
}

func (c *checker) validString(n *node, v string) bool {
	if n.minLength >= 0 && utf8.RuneCountInString(v) < n.minLength {
		if c.collect {
			c.fail(n, "minLength", "string has %d characters, want at least %d", utf8.RuneCountInString(v), n.minLength)
		}
		return false
	}
	return true
}

func (c *checker) validArray(n *node, v []any) bool {
	if n.items == nil {
		return true
	}
	ok := true
	for i, item := range v {
		c.path = append(c.path, pathToken{index: i})
		itemOK := c.valid(n.items, item)
		c.path = c.path[:len(c.path)-1]
		if !itemOK {
			if ok = false; c.done() {
				return false
			}
		}
	}
	return ok
}

// validApplicators checks the keywords that apply other schemas to v:
// $ref, allOf, anyOf, oneOf and not.
func (c *checker) validApplicators(n *node, v any) bool {
	ok := true
	if n.ref != nil && !c.valid(n.ref, v) {
		if ok = false; c.done() {
			return false
		}
	}
	for _, sub := range n.allOf {
		if !c.valid(sub, v) {
			if ok = false; c.done() {
				return false
			}
		}
	}
	if n.anyOf != nil && !c.validAnyOf(n, v) {
		if ok = false; c.done() {
			return false
		}
	}
	if n.oneOf != nil && !c.validOneOf(n, v) {
		if ok = false; c.done() {
			return false
		}
	}
	if n.not != nil && c.quiet(n.not, v) {
		if c.collect {
			c.fail(n, "not", "must not match the schema at %s", n.not.loc)
		}
		ok = false
	}
	return ok
}

func (c *checker) validNumber(n *node, text json.Number, num decimal) bool {
	ok := true
	if n.format != nil && !n.format.check(text, num) {
		if c.collect {
			c.fail(n, "format", "%s is not a valid %s", text, n.format.name)
		}
		if ok = false; c.done() {
			return false
		}
	}
	if n.minimum != nil && num.cmp(*n.minimum) < 0 {
		if c.collect {
			c.fail(n, "minimum", "%s is less than the minimum %s", text, n.minimum)
		}
		if ok = false; c.done() {
			return false
		}
	}
	if n.maximum != nil && num.cmp(*n.maximum) > 0 {
		if c.collect {
			c.fail(n, "maximum", "%s is greater than the maximum %s", text, n.maximum)
		}
		ok = false
	}
	return ok
}

func (c *checker) validObject(n *node, obj map[string]any) bool {
	ok := true
	for _, name := range n.required {
		if _, present := obj[name]; !present {
			if c.collect {
				c.fail(n, "required", "missing required property %q", name)
			}
			if ok = false; c.done() {
				return false
			}
		}
	}
	for _, name := range n.propNames {
		pv, present := obj[name]
		if !present {
			continue
		}
		if !c.validMember(n.props[name], name, pv) {
			if ok = false; c.done() {
				return false
			}
		}
	}
	if n.additional == nil {
		return ok
	}
	// Map order is random; visit extra members in sorted order only when the order can show
	// in the report.
	keys := make([]string, 0, len(obj))
	for name := range obj {
		if _, declared := n.props[name]; !declared {
			keys = append(keys, name)
		}
	}
	if c.collect {
		keys = sortedKeysOf(keys)
	}
	for _, name := range keys {
		if !c.validMember(n.additional, name, obj[name]) {
			if ok = false; c.done() {
				return false
			}
		}
	}
	return ok
}

func (c *checker) validAnyOf(n *node, v any) bool {
	for _, sub := range n.anyOf {
		if c.quiet(sub, v) {
			return true
		}
	}
	c.explainNoMatch(n, "anyOf", n.anyOf, v)
	return false
}

func (c *checker) validOneOf(n *node, v any) bool {
	first := -1
	for i, sub := range n.oneOf {
		if !c.quiet(sub, v) {
			continue
		}
		if first >= 0 {
			if c.collect {
				c.fail(n, "oneOf", "matches alternatives %d and %d, want exactly one", first, i)
			}
			return false
		}
		first = i
	}
	if first >= 0 {
		return true
	}
	c.explainNoMatch(n, "oneOf", n.oneOf, v)
	return false
}

func typeMatches(m typeMask, v any, num decimal) bool {
	switch v.(type) {
	case nil:
		return m&typeNull != 0
	case bool:
		return m&typeBoolean != 0
	case string:
		return m&typeString != 0
	case map[string]any:
		return m&typeObject != 0
	case []any:
		return m&typeArray != 0
	case json.Number:
		return m&typeNumber != 0 || (m&typeInteger != 0 && num.isInteger())
	}
	return false
}

// jsonEqual is JSON value equality: numbers compare by value (1 == 1.0), objects ignore
// member order.
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		da, ok1 := parseDecimal(string(a))
		db, ok2 := parseDecimal(string(bn))
		return ok1 && ok2 && da.cmp(db) == 0
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], bl[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !jsonEqual(av, bv) {
				return false
			}
		}
		return true
	}
	return false
}

func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		if jsonEqual(v, e) {
			return true
		}
	}
	return false
}

// pathToken is one step of the instance path: an object member or an array index.
type pathToken struct {
	key   string
	index int
	isKey bool
}

// validMember checks an object member's value with the member pushed onto the path.
func (c *checker) validMember(n *node, name string, v any) bool {
	c.path = append(c.path, pathToken{key: name, isKey: true})
	ok := c.valid(n, v)
	c.path = c.path[:len(c.path)-1]
	return ok
}

// pointer renders the current instance path as a JSON pointer.
func (c *checker) pointer() string {
	var b strings.Builder
	for _, t := range c.path {
		b.WriteByte('/')
		if t.isKey {
			b.WriteString(escapeToken(t.key))
		} else {
			b.WriteString(strconv.Itoa(t.index))
		}
	}
	return b.String()
}

func (d decimal) String() string {
	if d.digits == "" {
		return "0"
	}
	sign := ""
	if d.neg {
		sign = "-"
	}
	n := int64(len(d.digits))
	switch {
	case d.exp >= n && d.exp <= 21:
		return sign + d.digits + zeros(d.exp-n)
	case d.exp > 0 && d.exp < n:
		return sign + d.digits[:d.exp] + "." + d.digits[d.exp:]
	case d.exp <= 0 && d.exp > -6:
		return sign + "0." + zeros(-d.exp) + d.digits
	}
	mant := d.digits[:1]
	if n > 1 {
		mant += "." + d.digits[1:]
	}
	return sign + mant + "e" + strconv.FormatInt(d.exp-1, 10)
}

func zeros(n int64) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}
