package jsonschema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"strconv"
	"sync"
	"testing"

	ref "github.com/santhosh-tekuri/jsonschema/v6"
)

// The differential tests judge this package against github.com/santhosh-tekuri/jsonschema/v6,
// a complete 2020-12 implementation that passes the official test suite. Only tests import
// it; see the package comment for why the production binary must not.

const acpSchemaFile = "../acpkit/schema/v1/schema.json"

func readACPSchema(tb testing.TB) []byte {
	tb.Helper()
	raw, err := os.ReadFile(acpSchemaFile)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

func compileACP(tb testing.TB) *Schema {
	tb.Helper()
	s, err := Compile(readACPSchema(tb))
	if err != nil {
		tb.Fatalf("Compile(%s): %v", acpSchemaFile, err)
	}
	return s
}

// reference validates with santhosh-tekuri/jsonschema, configured to the same contract as
// this package: numeric formats asserted as ranges, every other format an annotation.
type reference struct {
	compiler *ref.Compiler
	mu       sync.Mutex
	compiled map[string]*ref.Schema
}

const referenceURL = "https://agentclientprotocol.com/schema/v1/schema.json"

func newReference(tb testing.TB, schema []byte) *reference {
	tb.Helper()
	doc, err := ref.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		tb.Fatal(err)
	}
	c := ref.NewCompiler()
	c.AssertFormat()
	for _, f := range referenceFormats() {
		c.RegisterFormat(f)
	}
	if err := c.AddResource(referenceURL, doc); err != nil {
		tb.Fatal(err)
	}
	return &reference{compiler: c, compiled: map[string]*ref.Schema{}}
}

// referenceFormats implements the numeric formats with big.Rat, independently of decimal.
func referenceFormats() []*ref.Format {
	intRange := func(name string, lo, hi *big.Int) *ref.Format {
		return &ref.Format{Name: name, Validate: func(v any) error {
			n, ok := v.(json.Number)
			if !ok {
				return nil // formats constrain only their own type
			}
			r, ok := new(big.Rat).SetString(string(n))
			if !ok {
				return fmt.Errorf("%s: unparsable", n)
			}
			if !r.IsInt() || r.Num().Cmp(lo) < 0 || r.Num().Cmp(hi) > 0 {
				return fmt.Errorf("%s out of %s range", n, name)
			}
			return nil
		}}
	}
	pow2 := func(e uint) *big.Int { return new(big.Int).Lsh(big.NewInt(1), e) }
	minus1 := func(x *big.Int) *big.Int { return new(big.Int).Sub(x, big.NewInt(1)) }
	neg := func(x *big.Int) *big.Int { return new(big.Int).Neg(x) }
	zero := big.NewInt(0)
	fs := []*ref.Format{
		intRange("int8", neg(pow2(7)), minus1(pow2(7))),
		intRange("uint8", zero, minus1(pow2(8))),
		intRange("int16", neg(pow2(15)), minus1(pow2(15))),
		intRange("uint16", zero, minus1(pow2(16))),
		intRange("int32", neg(pow2(31)), minus1(pow2(31))),
		intRange("uint32", zero, minus1(pow2(32))),
		intRange("int64", neg(pow2(63)), minus1(pow2(63))),
		intRange("uint64", zero, minus1(pow2(64))),
		{Name: "double", Validate: func(v any) error {
			n, ok := v.(json.Number)
			if !ok {
				return nil
			}
			if f, _ := strconv.ParseFloat(string(n), 64); math.IsInf(f, 0) {
				return fmt.Errorf("%s overflows a double", n)
			}
			return nil
		}},
	}
	// Non-numeric formats are annotations in this package's contract.
	for _, name := range []string{"uri", "date-time", "date", "time", "email", "uuid"} {
		fs = append(fs, &ref.Format{Name: name, Validate: func(any) error { return nil }})
	}
	return fs
}

// valid reports the reference verdict; err is set only when the instance is not JSON.
func (r *reference) valid(tb testing.TB, def string, instance []byte) (bool, error) {
	tb.Helper()
	r.mu.Lock()
	s, ok := r.compiled[def]
	if !ok {
		var err error
		if s, err = r.compiler.Compile(referenceURL + "#/$defs/" + def); err != nil {
			r.mu.Unlock()
			tb.Fatalf("reference compile %s: %v", def, err)
		}
		r.compiled[def] = s
	}
	r.mu.Unlock()
	inst, err := ref.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return false, err
	}
	return s.Validate(inst) == nil, nil
}

// ourVerdict is this package's verdict in the same shape as reference.valid.
func ourVerdict(tb testing.TB, s *Schema, def string, instance []byte) (bool, error) {
	tb.Helper()
	err := s.Validate(def, instance)
	var ve *ValidationError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ve):
		if len(ve.Violations) == 0 {
			tb.Errorf("%s: ValidationError without violations", def)
		}
		return false, nil
	}
	return false, err
}

type corpusEntry struct {
	Line     int
	Def      string          `json:"def"`
	Valid    bool            `json:"valid"`
	Note     string          `json:"note"`
	Instance json.RawMessage `json:"instance"`
}

func (e corpusEntry) String() string {
	return fmt.Sprintf("corpus.jsonl:%d %s (%s)", e.Line, e.Def, e.Note)
}

func loadCorpus(tb testing.TB) []corpusEntry {
	tb.Helper()
	f, err := os.Open("testdata/corpus.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		e := corpusEntry{Line: line}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			tb.Fatalf("corpus.jsonl:%d: %v", line, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}
