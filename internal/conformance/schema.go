package conformance

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaJSON is the official ACP v1 schema (see schema/README.md).
//
//go:embed schema/v1/schema.json
var schemaJSON []byte

// schemaURL names the embedded schema inside the compiler; it is never fetched.
const schemaURL = "https://agentclientprotocol.com/schema/v1/schema.json"

// acpSchema is the compiled schema plus method tables read from the $defs
// annotations (`x-method`, `x-side`), so the tables cannot drift from it.
type acpSchema struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema

	// method → $defs name
	agentResults  map[string]string // results of client→agent requests
	clientParams  map[string]string // params of agent→client requests
	notifications map[string]string // params of notifications an agent may send
}

var (
	schemaOnce sync.Once
	schemaVal  *acpSchema
	schemaErr  error
)

func loadSchema() (*acpSchema, error) {
	schemaOnce.Do(func() { schemaVal, schemaErr = compileSchema(schemaJSON) })
	return schemaVal, schemaErr
}

func compileSchema(raw []byte) (*acpSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse ACP schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("add ACP schema: %w", err)
	}
	var top struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
			Side   string `json:"x-side"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("read ACP schema $defs: %w", err)
	}
	s := &acpSchema{
		compiler:      c,
		compiled:      map[string]*jsonschema.Schema{},
		agentResults:  map[string]string{},
		clientParams:  map[string]string{},
		notifications: map[string]string{},
	}
	for name, d := range top.Defs {
		switch {
		case d.Method == "":
		case d.Side == "agent" && strings.HasSuffix(name, "Response"):
			s.agentResults[d.Method] = name
		case d.Side == "client" && strings.HasSuffix(name, "Request"):
			s.clientParams[d.Method] = name
		case (d.Side == "client" || d.Side == "protocol") && strings.HasSuffix(name, "Notification"):
			s.notifications[d.Method] = name
		}
	}
	return s, nil
}

// validate checks raw against #/$defs/<def>. The error is one line.
func (s *acpSchema) validate(def string, raw []byte) error {
	s.mu.Lock()
	sch, ok := s.compiled[def]
	if !ok {
		var err error
		sch, err = s.compiler.Compile(schemaURL + "#/$defs/" + def)
		if err != nil {
			s.mu.Unlock()
			return fmt.Errorf("compile $defs/%s: %w", def, err)
		}
		s.compiled[def] = sch
	}
	s.mu.Unlock()
	if len(raw) == 0 {
		raw = []byte("null") // an absent member is validated as null
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		msg := err.Error()
		// Drop the "jsonschema validation failed with '<url>'" header line.
		if i := strings.IndexByte(msg, '\n'); i >= 0 && strings.HasPrefix(msg, "jsonschema validation failed") {
			msg = msg[i+1:]
		}
		return fmt.Errorf("%s: %s", def, oneLine(msg, 400))
	}
	return nil
}

// oneLine folds s onto one line and cuts it to at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
