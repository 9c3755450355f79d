package conformance

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/corvid-agent/corvid/internal/jsonschema"
)

// schemaJSON is the official ACP v1 schema (see schema/README.md).
//
//go:embed schema/v1/schema.json
var schemaJSON []byte

// acpSchema is the compiled schema plus method tables read from the $defs
// annotations (`x-method`, `x-side`), so the tables cannot drift from it.
type acpSchema struct {
	schema *jsonschema.Schema // immutable; safe for concurrent Validate

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
	compiled, err := jsonschema.Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("compile ACP schema: %w", err)
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
		schema:        compiled,
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
	if len(raw) == 0 {
		raw = []byte("null") // an absent member is validated as null
	}
	if err := s.schema.Validate(def, raw); err != nil {
		return fmt.Errorf("%s: %s", def, oneLine(strings.ReplaceAll(err.Error(), "\n", "; "), 400))
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
