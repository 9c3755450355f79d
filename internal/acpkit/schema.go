package acpkit

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/corvid-agent/corvid/internal/jsonschema"
)

// schemaJSON is the official ACP v1 schema (see schema/README.md), the repository's only copy.
//
//go:embed schema/v1/schema.json
var schemaJSON []byte

// SchemaJSON returns the embedded ACP v1 JSON Schema.
func SchemaJSON() []byte { return bytes.Clone(schemaJSON) }

// Role says which side of a method a $defs type describes.
type Role int

const (
	AgentParams       Role = iota // params of a client→agent request ("session/prompt" → PromptRequest)
	AgentResult                   // result of a client→agent request (PromptResponse)
	ClientParams                  // params of an agent→client request (RequestPermissionRequest)
	ClientResult                  // result of an agent→client request (RequestPermissionResponse)
	AgentNotification             // params of a notification an agent may send (SessionNotification)
	numRoles
)

// Schema is the compiled ACP schema with its method tables. It is immutable and safe for
// concurrent use.
type Schema struct {
	compiled *jsonschema.Schema
	defs     [numRoles]map[string]string // method → $defs name
	props    map[string]map[string]bool  // $defs name → its "properties" names
}

var (
	schemaOnce sync.Once
	schemaVal  *Schema
	schemaErr  error
)

// LoadSchema compiles the embedded schema on first use and returns it.
func LoadSchema() (*Schema, error) {
	schemaOnce.Do(func() { schemaVal, schemaErr = CompileSchema(schemaJSON) })
	return schemaVal, schemaErr
}

// Validate checks raw against #/$defs/<def> of the embedded schema.
func Validate(def string, raw []byte) error {
	s, err := LoadSchema()
	if err != nil {
		return err
	}
	return s.Validate(def, raw)
}

// CompileSchema compiles an ACP schema document and reads its method tables from the
// `x-method` and `x-side` annotations of its $defs.
func CompileSchema(raw []byte) (*Schema, error) {
	compiled, err := jsonschema.Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("compile ACP schema: %w", err)
	}
	var top struct {
		Defs map[string]struct {
			Method     string                     `json:"x-method"`
			Side       string                     `json:"x-side"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("read ACP schema $defs: %w", err)
	}
	s := &Schema{compiled: compiled, props: map[string]map[string]bool{}}
	for r := range s.defs {
		s.defs[r] = map[string]string{}
	}
	for name, d := range top.Defs {
		s.props[name] = map[string]bool{}
		for p := range d.Properties {
			s.props[name][p] = true
		}
		if r, ok := roleOf(name, d.Side); ok && d.Method != "" {
			s.defs[r][d.Method] = name
		}
	}
	return s, nil
}

func roleOf(def, side string) (Role, bool) {
	switch {
	case side == "agent" && strings.HasSuffix(def, "Request"):
		return AgentParams, true
	case side == "agent" && strings.HasSuffix(def, "Response"):
		return AgentResult, true
	case side == "client" && strings.HasSuffix(def, "Request"):
		return ClientParams, true
	case side == "client" && strings.HasSuffix(def, "Response"):
		return ClientResult, true
	case (side == "client" || side == "protocol") && strings.HasSuffix(def, "Notification"):
		return AgentNotification, true
	}
	return 0, false
}

// Def returns the $defs name describing method in role r, or "" when the schema has none
// (an extension method, or a method of the other side).
func (s *Schema) Def(r Role, method string) string { return s.defs[r][method] }

// Methods lists the methods that have a type in role r, sorted.
func (s *Schema) Methods(r Role) []string {
	var out []string
	for m := range s.defs[r] {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// HasProperty reports whether #/$defs/<def> declares property name in its own "properties".
func (s *Schema) HasProperty(def, name string) bool { return s.props[def][name] }

// Validate checks raw against #/$defs/<def>. An empty raw (an absent member) is validated as
// null. The error names def.
func (s *Schema) Validate(def string, raw []byte) error {
	if len(raw) == 0 {
		raw = []byte("null")
	}
	if err := s.compiled.Validate(def, raw); err != nil {
		return fmt.Errorf("%s: %w", def, err)
	}
	return nil
}
