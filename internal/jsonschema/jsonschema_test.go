package jsonschema

import (
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// verdictCase is one instance of a small schema and the 2020-12 verdict on it. checkVerdicts
// asserts the verdict against both this package and the reference, so a wrong expectation
// here cannot hide a bug.
type verdictCase struct {
	instance string
	valid    bool
}

func checkVerdicts(t *testing.T, defSchema string, cases []verdictCase) {
	t.Helper()
	doc := []byte(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"T": ` + defSchema + `}}`)
	s, err := Compile(doc)
	if err != nil {
		t.Fatalf("Compile(%s): %v", defSchema, err)
	}
	r := newReference(t, doc)
	for _, c := range cases {
		refOK, err := r.valid(t, "T", []byte(c.instance))
		if err != nil {
			t.Fatalf("reference decode %s: %v", c.instance, err)
		}
		if refOK != c.valid {
			t.Errorf("%s against %s: the reference says valid=%v; fix the expectation", c.instance, defSchema, refOK)
		}
		err = s.Validate("T", []byte(c.instance))
		if (err == nil) != c.valid {
			t.Errorf("%s against %s: want valid=%v, got error %v", c.instance, defSchema, c.valid, err)
		}
	}
}

func TestIntegerIsANumberWithoutFractionalPart(t *testing.T) {
	checkVerdicts(t, `{"type": "integer"}`, []verdictCase{
		{`1`, true}, {`-0`, true}, {`1.0`, true}, {`10.00`, true}, {`1e2`, true}, {`1.5e1`, true},
		{`123456789012345678901234567890`, true}, {`1E+3`, true},
		{`1.5`, false}, {`1e-1`, false}, {`15e-1`, false}, {`0.1`, false},
		{`"1"`, false}, {`true`, false}, {`null`, false}, {`[1]`, false},
	})
}

func TestTypeListAcceptsAnyListedType(t *testing.T) {
	checkVerdicts(t, `{"type": ["integer", "null"]}`, []verdictCase{
		{`null`, true}, {`3`, true}, {`3.5`, false}, {`"3"`, false}, {`{}`, false},
	})
	checkVerdicts(t, `{"type": ["number", "boolean"]}`, []verdictCase{
		{`3.5`, true}, {`false`, true}, {`null`, false},
	})
}

func TestNumericFormatsAssertTheirRange(t *testing.T) {
	checkVerdicts(t, `{"format": "uint16"}`, []verdictCase{
		{`0`, true}, {`65535`, true}, {`65535.0`, true}, {`65536`, false}, {`-1`, false}, {`1.5`, false},
		{`"65536"`, true}, // a format constrains only numbers
	})
	checkVerdicts(t, `{"format": "int32"}`, []verdictCase{
		{`-2147483648`, true}, {`2147483647`, true}, {`2147483648`, false}, {`-2147483649`, false},
	})
	checkVerdicts(t, `{"format": "uint32"}`, []verdictCase{
		{`4294967295`, true}, {`4294967296`, false}, {`42949672.95e2`, true}, {`42949672.96e2`, false},
	})
	checkVerdicts(t, `{"format": "int64"}`, []verdictCase{
		{`-9223372036854775808`, true}, {`9223372036854775807`, true},
		{`9223372036854775808`, false}, {`-9223372036854775809`, false},
	})
	checkVerdicts(t, `{"format": "uint64"}`, []verdictCase{
		{`18446744073709551615`, true}, {`18446744073709551616`, false}, {`-0`, true}, {`-1`, false},
		{`1.8446744073709551615e19`, true}, {`1e400`, false},
	})
	checkVerdicts(t, `{"format": "double"}`, []verdictCase{
		{`1.5`, true}, {`1e308`, true}, {`-1e300`, true}, {`1e-400`, true}, {`1e400`, false}, {`-1e309`, false},
	})
}

func TestNonNumericFormatsAreAnnotations(t *testing.T) {
	checkVerdicts(t, `{"type": "string", "format": "uri"}`, []verdictCase{
		{`"not a uri"`, true}, {`""`, true},
	})
	checkVerdicts(t, `{"format": "date-time"}`, []verdictCase{{`"yesterday"`, true}})
}

func TestMinimumAndMaximumCompareExactly(t *testing.T) {
	checkVerdicts(t, `{"minimum": 0, "maximum": 65535}`, []verdictCase{
		{`0`, true}, {`-0.0`, true}, {`65535`, true}, {`65535.000001`, false}, {`-1e-30`, false},
		{`"-5"`, true}, {`1e400`, false},
	})
	checkVerdicts(t, `{"minimum": -2.5}`, []verdictCase{{`-2.5`, true}, {`-2.50001`, false}, {`-25e-1`, true}})
}

func TestConstAndEnumCompareNumbersByValue(t *testing.T) {
	checkVerdicts(t, `{"const": -32700}`, []verdictCase{
		{`-32700`, true}, {`-32700.0`, true}, {`-3.27e4`, true}, {`-32701`, false}, {`"-32700"`, false},
	})
	checkVerdicts(t, `{"enum": ["2.0", {"a": [1, null]}, false]}`, []verdictCase{
		{`"2.0"`, true}, {`{"a": [1.0, null]}`, true}, {`false`, true},
		{`2.0`, false}, {`{"a": [1]}`, false}, {`{"a": [1, null], "b": 1}`, false}, {`0`, false},
	})
}

func TestOneOfRequiresExactlyOneMatch(t *testing.T) {
	checkVerdicts(t, `{"oneOf": [{"type": "integer"}, {"type": "number"}]}`, []verdictCase{
		{`1.5`, true}, {`1`, false}, {`"x"`, false},
	})
}

func TestAnyOfAllOfAndNot(t *testing.T) {
	checkVerdicts(t, `{"anyOf": [{"type": "string"}, {"minimum": 10}]}`, []verdictCase{
		{`"x"`, true}, {`11`, true}, {`9`, false}, {`null`, true}, // null passes minimum
	})
	checkVerdicts(t, `{"allOf": [{"minimum": 1}, {"maximum": 3}]}`, []verdictCase{
		{`2`, true}, {`0`, false}, {`4`, false},
	})
	checkVerdicts(t, `{"type": "object", "required": ["mode"], "not": {"properties": {"mode": {"const": "form"}}}}`, []verdictCase{
		{`{"mode": "custom"}`, true}, {`{"mode": "form"}`, false}, {`{}`, false},
	})
}

func TestObjectKeywords(t *testing.T) {
	checkVerdicts(t, `{
		"type": "object",
		"properties": {"a": {"type": "string"}, "a/b~c": {"type": "integer"}},
		"required": ["a"],
		"additionalProperties": {"type": "boolean"},
		"unevaluatedProperties": true
	}`, []verdictCase{
		{`{"a": "x"}`, true}, {`{"a": "x", "z": true}`, true}, {`{"a": "x", "a/b~c": 2}`, true},
		{`{"a": "x", "z": 1}`, false}, {`{"a": 1}`, false}, {`{"z": true}`, false}, {`{"a": "x", "a/b~c": "2"}`, false},
	})
	checkVerdicts(t, `{"properties": {"a": false}, "additionalProperties": false}`, []verdictCase{
		{`{}`, true}, {`{"a": 1}`, false}, {`{"b": 1}`, false}, {`[]`, true},
	})
}

func TestItemsAppliesToEveryElement(t *testing.T) {
	checkVerdicts(t, `{"type": "array", "items": {"type": "string"}}`, []verdictCase{
		{`[]`, true}, {`["a", "b"]`, true}, {`["a", 1]`, false}, {`{"0": "a"}`, false},
	})
}

func TestMinLengthCountsCodePoints(t *testing.T) {
	checkVerdicts(t, `{"minLength": 2}`, []verdictCase{
		{`"ab"`, true}, {`"é"`, false}, {`"😀"`, false}, {`"éé"`, true}, {`3`, true},
	})
}

func TestRecursiveRefsFollowTheInstance(t *testing.T) {
	checkVerdicts(t, `{"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/$defs/T"}, {"type": "null"}]}, "v": {"type": "integer"}}}`, []verdictCase{
		{`{"v": 1, "next": {"v": 2, "next": {"v": 3, "next": null}}}`, true},
		{`{"v": 1, "next": {"v": 2, "next": {"v": "3"}}}`, false},
	})
}

func TestCompileRejectsWhatItCannotValidate(t *testing.T) {
	for name, doc := range map[string]string{
		"unsupported keyword":         `{"$defs": {"T": {"type": "string", "pattern": "^a"}}}`,
		"minItems is not used by ACP": `{"$defs": {"T": {"minItems": 1}}}`,
		"unevaluatedProperties false": `{"$defs": {"T": {"unevaluatedProperties": false}}}`,
		"external $ref":               `{"$defs": {"T": {"$ref": "other.json#/$defs/X"}}}`,
		"unresolvable $ref":           `{"$defs": {"T": {"$ref": "#/$defs/Missing"}}}`,
		"$ref into a non-schema":      `{"$defs": {"T": {"$ref": "#/$defs"}}}`,
		"$ref loop":                   `{"$defs": {"T": {"allOf": [{"$ref": "#/$defs/U"}]}, "U": {"anyOf": [{"$ref": "#/$defs/T"}]}}}`,
		"unknown type":                `{"$defs": {"T": {"type": "float"}}}`,
		"other draft":                 `{"$schema": "http://json-schema.org/draft-07/schema#", "$defs": {}}`,
		"schema not an object":        `{"$defs": {"T": 3}}`,
		"items as an array":           `{"$defs": {"T": {"items": [{"type": "string"}]}}}`,
		"not JSON":                    `{"$defs": `,
	} {
		if _, err := Compile([]byte(doc)); err == nil {
			t.Errorf("%s: Compile(%s) succeeded", name, doc)
		}
	}
}

func TestValidationErrorNamesInstanceAndSchemaPaths(t *testing.T) {
	s := compileACP(t)
	err := s.Validate("SessionNotification", []byte(`{
		"sessionId": "s",
		"update": {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "run", "status": "zz",
			"locations": [{"path": "a"}, {"path": "b", "line": 4294967296}]}
	}`))
	want := strings.Join([]string{
		`/update: missing required property "title" [#/$defs/ToolCall/required]`,
		`/update/kind: got "run", want one of "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other" [#/$defs/ToolKind/oneOf]`,
		`/update/locations/1/line: 4294967296 is not a valid uint32 [#/$defs/ToolCallLocation/properties/line/format]`,
		`/update/status: got "zz", want one of "pending", "in_progress", "completed", "failed" [#/$defs/ToolCallStatus/oneOf]`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Def != "SessionNotification" || ve.Truncated {
		t.Errorf("want a complete *ValidationError for SessionNotification, got %#v", err)
	}
}

func TestValidationErrorPicksTheTaggedAlternative(t *testing.T) {
	s := compileACP(t)
	for _, c := range []struct{ def, instance, want string }{
		{"ContentBlock", `{"type": "image", "data": "AA=="}`,
			`(root): missing required property "mimeType" [#/$defs/ImageContent/required]`},
		{"ContentBlock", `{"type": "video"}`,
			`(root): "type" is "video", want one of "text", "image", "audio", "resource_link", "resource" [#/$defs/ContentBlock/oneOf]`},
		{"InitializeResponse", `{"protocolVersion": 1, "agentInfo": {"name": "corvid"}}`,
			`/agentInfo: missing required property "version" [#/$defs/Implementation/required]`},
		{"ContentBlock", `[]`, `(root): matches none of the 5 alternatives [#/$defs/ContentBlock/oneOf]`},
	} {
		if err := s.Validate(c.def, []byte(c.instance)); err == nil || err.Error() != c.want {
			t.Errorf("%s %s:\ngot  %v\nwant %s", c.def, c.instance, err, c.want)
		}
	}
}

func TestValidationErrorIsDeterministicAndBounded(t *testing.T) {
	doc := []byte(`{"$defs": {"T": {"type": "object", "additionalProperties": {"type": "string"}}}}`)
	s, err := Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("{")
	for i := range 20 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + string(rune('a'+i)) + `": 1`)
	}
	b.WriteString("}")
	first := s.Validate("T", []byte(b.String()))
	var ve *ValidationError
	if !errors.As(first, &ve) || len(ve.Violations) != maxViolations || !ve.Truncated {
		t.Fatalf("want %d violations and Truncated, got %#v", maxViolations, first)
	}
	if ve.Violations[0].InstancePath != "/ka" || ve.Violations[maxViolations-1].InstancePath != "/kh" {
		t.Errorf("violations not in member order: %v", ve.Violations)
	}
	if lines := strings.Count(first.Error(), "\n") + 1; lines != maxViolations+1 {
		t.Errorf("want %d lines, got %d:\n%v", maxViolations+1, lines, first)
	}
	for range 50 {
		if again := s.Validate("T", []byte(b.String())); again.Error() != first.Error() {
			t.Fatalf("report changed between runs:\n%v\n---\n%v", first, again)
		}
	}
}

func TestValidateRejectsNonJSONAndUnknownDefs(t *testing.T) {
	s := compileACP(t)
	var ve *ValidationError
	for _, c := range []struct{ def, instance string }{
		{"NoSuchDef", `{}`},
		{"PromptResponse", ``},
		{"PromptResponse", `{"stopReason": "end_turn"} {}`},
		{"PromptResponse", `{"stopReason": }`},
	} {
		err := s.Validate(c.def, []byte(c.instance))
		if err == nil || errors.As(err, &ve) {
			t.Errorf("Validate(%s, %q) = %v, want a non-validation error", c.def, c.instance, err)
		}
	}
}

func TestValidateIsSafeForConcurrentUse(t *testing.T) {
	s := compileACP(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 200 {
				valid := s.Validate("PromptResponse", []byte(`{"stopReason": "end_turn"}`))
				invalid := s.Validate("PromptResponse", []byte(`{"stopReason": 7}`))
				if valid != nil || invalid == nil {
					t.Errorf("goroutine %d: got %v and %v", i, valid, invalid)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestLinksOnlyTheStandardLibrary keeps the package cheap to link: the reason it exists is
// that the production binary must not pull in a validator with init-time work.
func TestLinksOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) != 1 || !strings.HasSuffix(deps[0], "/internal/jsonschema") {
		t.Errorf("non-standard dependencies: %v", deps)
	}
}
