package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestCorpusVerdictsMatchReferenceAndExpectation(t *testing.T) {
	s := compileACP(t)
	r := newReference(t, readACPSchema(t))
	corpus := loadCorpus(t)
	valid := 0
	for _, e := range corpus {
		refOK, err := r.valid(t, e.Def, e.Instance)
		if err != nil {
			t.Fatalf("%s: reference cannot decode: %v", e, err)
		}
		ourOK, err := ourVerdict(t, s, e.Def, e.Instance)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if refOK != e.Valid {
			t.Errorf("%s: corpus says valid=%v, reference says %v", e, e.Valid, refOK)
		}
		if ourOK != refOK {
			t.Errorf("%s: valid=%v here, %v in the reference; error: %v", e, ourOK, refOK, s.Validate(e.Def, e.Instance))
		}
		if e.Valid {
			valid++
		}
	}
	t.Logf("%d corpus instances (%d valid, %d invalid) agree", len(corpus), valid, len(corpus)-valid)
	if len(corpus) < 100 || valid < 40 || len(corpus)-valid < 40 {
		t.Errorf("corpus too small to mean much: %d instances, %d valid", len(corpus), valid)
	}
}

// TestCorpusCoversTheProtocol keeps the corpus honest as the schema grows: every method's
// params and result, and every variant of the tagged unions agents send, has a valid instance.
func TestCorpusCoversTheProtocol(t *testing.T) {
	var doc struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
			OneOf  []struct {
				Properties map[string]struct {
					Const any `json:"const"`
				} `json:"properties"`
			} `json:"oneOf"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(readACPSchema(t), &doc); err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{} // def, or def + "." + tag value
	for _, e := range loadCorpus(t) {
		if !e.Valid {
			continue
		}
		covered[e.Def] = true
		var obj map[string]any
		_ = json.Unmarshal(e.Instance, &obj)
		if e.Def == "SessionNotification" {
			if u, ok := obj["update"].(map[string]any); ok {
				covered[fmt.Sprintf("SessionUpdate.%v", u["sessionUpdate"])] = true
			}
		}
		if e.Def == "ContentBlock" {
			covered[fmt.Sprintf("ContentBlock.%v", obj["type"])] = true
		}
	}
	var want []string
	for name, d := range doc.Defs {
		if d.Method != "" {
			want = append(want, name)
		}
	}
	for _, union := range []struct{ def, tag string }{{"SessionUpdate", "sessionUpdate"}, {"ContentBlock", "type"}} {
		for _, alt := range doc.Defs[union.def].OneOf {
			want = append(want, fmt.Sprintf("%s.%v", union.def, alt.Properties[union.tag].Const))
		}
	}
	slices.Sort(want)
	for _, w := range want {
		if !covered[w] {
			t.Errorf("corpus.jsonl has no valid instance for %s", w)
		}
	}
	if len(want) < 50 {
		t.Errorf("expected at least 50 defs and variants to cover, found %d", len(want))
	}
}

func TestMutantsVerdictsMatchReference(t *testing.T) {
	s := compileACP(t)
	r := newReference(t, readACPSchema(t))
	var total, invalid int
	for _, e := range loadCorpus(t) {
		if !e.Valid {
			continue
		}
		for _, m := range mutants(t, e.Instance) {
			total++
			refOK, err := r.valid(t, e.Def, m.instance)
			if err != nil {
				t.Fatalf("%s mutant %s: reference cannot decode %s: %v", e, m.what, m.instance, err)
			}
			ourOK, err := ourVerdict(t, s, e.Def, m.instance)
			if err != nil {
				t.Fatalf("%s mutant %s: %v", e, m.what, err)
			}
			if ourOK != refOK {
				t.Errorf("%s mutant %s: valid=%v here, %v in the reference\n%s\nerror: %v",
					e, m.what, ourOK, refOK, m.instance, s.Validate(e.Def, m.instance))
			}
			if !refOK {
				invalid++
			}
		}
	}
	t.Logf("%d mutants (%d invalid, %d still valid) agree", total, invalid, total-invalid)
	if total < 1000 || invalid < total/4 || total-invalid < total/10 {
		t.Errorf("mutants do not exercise both verdicts: %d total, %d invalid", total, invalid)
	}
}

type mutant struct {
	what     string
	instance []byte
}

// mutants derives instances from a valid one by the mistakes agents make: a member dropped,
// nulled or of the wrong type, an unknown tag value, an extra member, a fractional or
// out-of-range integer. Each mutant changes one place.
func mutants(tb testing.TB, instance []byte) []mutant {
	tb.Helper()
	root, err := decodeJSON(instance)
	if err != nil {
		tb.Fatal(err)
	}
	var out []mutant
	emit := func(what string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, mutant{what, b})
	}
	var walk func(path []any, v any)
	walk = func(path []any, v any) {
		at := pointerOf(path)
		for _, rep := range replacements(v) {
			emit(fmt.Sprintf("%s=%s", at, rep.what), replaceAt(root, path, rep.value, false))
		}
		switch v := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(v) {
				p := append(slices.Clip(path), k)
				emit(fmt.Sprintf("drop %s", pointerOf(p)), replaceAt(root, p, nil, true))
				walk(p, v[k])
			}
			withExtra := deepCopy(v).(map[string]any)
			withExtra["zzExtra"] = json.Number("1")
			emit(fmt.Sprintf("%s+zzExtra", at), replaceAt(root, path, withExtra, false))
		case []any:
			for i, item := range v {
				walk(append(slices.Clip(path), i), item)
			}
			emit(fmt.Sprintf("%s=[]", at), replaceAt(root, path, []any{}, false))
			emit(fmt.Sprintf("%s+null item", at), replaceAt(root, path, append(deepCopy(v).([]any), nil), false))
		}
	}
	walk(nil, root)
	return out
}

type replacement struct {
	what  string
	value any
}

func replacements(v any) []replacement {
	out := []replacement{{"null", nil}}
	num := func(s string) replacement { return replacement{s, json.Number(s)} }
	switch v := v.(type) {
	case nil:
		out = []replacement{{"false", false}, {"{}", map[string]any{}}}
	case bool:
		out = append(out, replacement{`"true"`, "true"})
	case string:
		out = append(out, replacement{`"zz_unknown"`, "zz_unknown"}, replacement{`""`, ""}, num("7"))
	case json.Number:
		s := string(v)
		out = append(out, replacement{"string", s}, num("1.5"), num("-1"), num("65536"),
			num("4294967296"), num("-2147483649"), num("9223372036854775808"),
			num("18446744073709551616"), num("1e400"))
		if !strings.ContainsAny(s, ".eE") {
			out = append(out, num(s+".5"), num(s+".0"), num(s+"e0"))
		}
	case map[string]any:
		out = append(out, replacement{"[]", []any{}}, replacement{`"obj"`, "obj"})
	case []any:
		out = append(out, replacement{"{}", map[string]any{}}, replacement{`"arr"`, "arr"})
	}
	return out
}

// replaceAt returns a copy of root with the value at path replaced, or deleted from its
// parent object when drop is set.
func replaceAt(root any, path []any, value any, drop bool) any {
	if len(path) == 0 {
		return value
	}
	switch c := deepCopy(root).(type) {
	case map[string]any:
		k := path[0].(string)
		if len(path) == 1 && drop {
			delete(c, k)
		} else {
			c[k] = replaceAt(c[k], path[1:], value, drop)
		}
		return c
	case []any:
		i := path[0].(int)
		c[i] = replaceAt(c[i], path[1:], value, drop)
		return c
	}
	panic("path does not fit the instance")
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(v))
		for k, x := range v {
			c[k] = deepCopy(x)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, x := range v {
			c[i] = deepCopy(x)
		}
		return c
	}
	return v
}

func pointerOf(path []any) string {
	var b strings.Builder
	for _, p := range path {
		fmt.Fprintf(&b, "/%v", p)
	}
	if b.Len() == 0 {
		return "(root)"
	}
	return b.String()
}

// FuzzValidate checks that both validators agree on arbitrary instances of any $def.
// Seeds are the corpus and its mutants: go test -fuzz=FuzzValidate ./internal/jsonschema/
func FuzzValidate(f *testing.F) {
	raw := readACPSchema(f)
	s := compileACP(f)
	r := newReference(f, raw)
	defs := sortedKeys(s.defs)
	for _, e := range loadCorpus(f) {
		i := uint16(slices.Index(defs, e.Def))
		f.Add(i, []byte(e.Instance))
		if e.Valid {
			for j, m := range mutants(f, e.Instance) {
				if j%7 == 0 { // a sample keeps the seed corpus quick to replay
					f.Add(i, m.instance)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, defIndex uint16, instance []byte) {
		def := defs[int(defIndex)%len(defs)]
		if v, err := decodeJSON(instance); err == nil && !referenceCanJudge(v) {
			t.Skip("number with an exponent beyond what big.Rat in the reference accepts")
		}
		refOK, refErr := r.valid(t, def, instance)
		ourOK, ourErr := ourVerdict(t, s, def, instance)
		if (refErr != nil) != (ourErr != nil) {
			t.Fatalf("%s %q: decode errors differ: reference %v, here %v", def, instance, refErr, ourErr)
		}
		if refErr == nil && ourOK != refOK {
			t.Fatalf("%s %q: valid=%v here, %v in the reference; error: %v", def, instance, ourOK, refOK, s.Validate(def, instance))
		}
	})
}

// referenceCanJudge reports whether every number in v is within big.Rat.SetString's limits
// (decimal exponents up to 10^6), beyond which the reference calls any number invalid.
func referenceCanJudge(v any) bool {
	switch v := v.(type) {
	case json.Number:
		if len(v) > 100_000 {
			return false
		}
		i := strings.IndexAny(string(v), "eE")
		return i < 0 || len(bytes.TrimLeft([]byte(strings.TrimLeft(string(v)[i+1:], "+-")), "0")) <= 5
	case map[string]any:
		for _, x := range v {
			if !referenceCanJudge(x) {
				return false
			}
		}
	case []any:
		for _, x := range v {
			if !referenceCanJudge(x) {
				return false
			}
		}
	}
	return true
}
