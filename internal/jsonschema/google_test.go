package jsonschema

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	google "github.com/google/jsonschema-go/jsonschema"
	ref "github.com/santhosh-tekuri/jsonschema/v6"
)

// github.com/google/jsonschema-go is linked into corvid through the MCP SDK, so it was
// tried as a replacement for this package on the same corpus and benchmarks. These
// tests and benchmarks keep the comparison reproducible:
//
//   - it ignores "format", so it cannot assert the ACP schema's integer formats (uint16,
//     uint32, int64, uint64): the corpus lines and mutants with out-of-range integers pass
//     it (TestGoogleDiffersOnlyByIgnoringFormats pins that this is the only difference);
//   - it decodes instances into float64, so 1e400 is not even decodable and integers past
//     2^53 lose precision;
//   - it validates only a schema's root, so each $defs entry needs its own Resolve of the
//     whole 246 KB document (BenchmarkGoogleCompile), and validating is several times
//     slower (BenchmarkGoogleValidate against BenchmarkValidate).

// googleACP validates against $defs entries of the ACP schema with google/jsonschema-go.
type googleACP struct {
	defs     map[string]*google.Schema
	mu       sync.Mutex
	resolved map[string]*google.Resolved
}

func newGoogleACP(tb testing.TB) *googleACP {
	tb.Helper()
	var root google.Schema
	if err := json.Unmarshal(readACPSchema(tb), &root); err != nil {
		tb.Fatal(err)
	}
	return &googleACP{defs: root.Defs, resolved: map[string]*google.Resolved{}}
}

// def resolves a schema that is only a $ref to #/$defs/<name>, next to all the $defs.
func (g *googleACP) def(tb testing.TB, name string) *google.Resolved {
	tb.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if r, ok := g.resolved[name]; ok {
		return r
	}
	wrapper := &google.Schema{Ref: "#/$defs/" + name, Defs: g.defs}
	r, err := wrapper.Resolve(&google.ResolveOptions{BaseURI: referenceURL})
	if err != nil {
		tb.Fatalf("google resolve %s: %v", name, err)
	}
	g.resolved[name] = r
	return r
}

// valid is google's verdict; ok is false when the instance cannot be decoded into float64s.
func (g *googleACP) valid(tb testing.TB, def string, instance []byte) (valid, ok bool) {
	var v any
	if err := json.Unmarshal(instance, &v); err != nil {
		return false, false
	}
	return g.def(tb, def).Validate(v) == nil, true
}

// formatBlindReference is the reference validator with "format" left an annotation.
func formatBlindReference(tb testing.TB) func(def string, instance []byte) bool {
	doc, err := ref.UnmarshalJSON(bytes.NewReader(readACPSchema(tb)))
	if err != nil {
		tb.Fatal(err)
	}
	c := ref.NewCompiler()
	if err := c.AddResource(referenceURL, doc); err != nil {
		tb.Fatal(err)
	}
	compiled := map[string]*ref.Schema{}
	return func(def string, instance []byte) bool {
		s, ok := compiled[def]
		if !ok {
			if s, err = c.Compile(referenceURL + "#/$defs/" + def); err != nil {
				tb.Fatal(err)
			}
			compiled[def] = s
		}
		inst, err := ref.UnmarshalJSON(bytes.NewReader(instance))
		if err != nil {
			tb.Fatal(err)
		}
		return s.Validate(inst) == nil
	}
}

// TestGoogleDiffersOnlyByIgnoringFormats: on the corpus lines of the $defs agents send
// most, google/jsonschema-go agrees with the reference once the reference also ignores
// "format", and disagrees with this package exactly on the lines whose integers are out of
// their format's range. (Each $defs entry costs google a Resolve of the whole schema, so
// the test keeps to a few.)
func TestGoogleDiffersOnlyByIgnoringFormats(t *testing.T) {
	g := newGoogleACP(t)
	blind := formatBlindReference(t)
	s := compileACP(t)
	missed := 0
	defs := map[string]bool{"SessionNotification": true, "ContentBlock": true, "ReadTextFileRequest": true,
		"Error": true, "RequestId": true}
	for _, e := range loadCorpus(t) {
		if !defs[e.Def] {
			continue
		}
		gOK, decodable := g.valid(t, e.Def, e.Instance)
		if !decodable {
			continue
		}
		if want := blind(e.Def, e.Instance); gOK != want {
			t.Errorf("%s: google says valid=%v, the format-blind reference %v", e, gOK, want)
		}
		if ours := s.Validate(e.Def, e.Instance) == nil; ours != gOK {
			missed++
			if ours || e.Valid {
				t.Errorf("%s: google accepts or rejects differently from this package for a reason other than formats", e)
			}
		}
	}
	t.Logf("google/jsonschema-go accepts %d corpus instances that break an integer format", missed)
	if missed == 0 {
		t.Error("no corpus line shows the format gap any more: re-evaluate google/jsonschema-go")
	}
}

func BenchmarkGoogleCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		g := newGoogleACP(b)
		g.def(b, "SessionNotification")
	}
}

func BenchmarkGoogleValidate(b *testing.B) {
	g := newGoogleACP(b)
	for _, m := range benchMessages {
		b.Run(m.name, func(b *testing.B) {
			in := []byte(m.instance)
			r := g.def(b, m.def)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				_ = json.Unmarshal(in, &v)
				_ = r.Validate(v)
			}
		})
	}
}
