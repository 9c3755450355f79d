package testkit

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

// schemaURL names the embedded schema inside the compiler. It is never fetched.
const schemaURL = "https://agentclientprotocol.com/schema/v1/schema.json"

// SchemaJSON returns the embedded ACP v1 JSON Schema.
func SchemaJSON() []byte { return bytes.Clone(schemaJSON) }

// acpSchema holds the compiled schema and the method tables derived from its $defs
// (`x-method` and `x-side` annotations), so the tables cannot drift from the schema.
type acpSchema struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema

	// Keyed by JSON-RPC method; values are $defs names.
	agentRequests      map[string]string // client→agent request params (x-side agent)
	agentResponses     map[string]string // results of client→agent requests
	clientRequests     map[string]string // agent→client request params (x-side client)
	clientResponses    map[string]string // results of agent→client requests
	agentNotifications map[string]string // notifications the agent may send (x-side client or protocol)
}

var (
	schemaOnce sync.Once
	schemaVal  *acpSchema
	schemaErr  error
)

func loadSchema() (*acpSchema, error) {
	schemaOnce.Do(func() {
		schemaVal, schemaErr = newACPSchema(schemaJSON)
	})
	return schemaVal, schemaErr
}

func newACPSchema(raw []byte) (*acpSchema, error) {
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
		compiler:           c,
		compiled:           map[string]*jsonschema.Schema{},
		agentRequests:      map[string]string{},
		agentResponses:     map[string]string{},
		clientRequests:     map[string]string{},
		clientResponses:    map[string]string{},
		agentNotifications: map[string]string{},
	}
	for name, d := range top.Defs {
		if d.Method == "" {
			continue
		}
		switch {
		case d.Side == "agent" && strings.HasSuffix(name, "Request"):
			s.agentRequests[d.Method] = name
		case d.Side == "agent" && strings.HasSuffix(name, "Response"):
			s.agentResponses[d.Method] = name
		case d.Side == "client" && strings.HasSuffix(name, "Request"):
			s.clientRequests[d.Method] = name
		case d.Side == "client" && strings.HasSuffix(name, "Response"):
			s.clientResponses[d.Method] = name
		case (d.Side == "client" || d.Side == "protocol") && strings.HasSuffix(name, "Notification"):
			s.agentNotifications[d.Method] = name
		}
	}
	return s, nil
}

// validate checks the JSON value raw against #/$defs/<def>.
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
		return fmt.Errorf("decode instance: %w", err)
	}
	return sch.Validate(inst)
}

// ValidateDef validates a JSON value against the ACP v1 schema type #/$defs/<def>
// (for example "SessionNotification"). It is exported for tests of corvid's wire types.
func ValidateDef(def string, data []byte) error {
	s, err := loadSchema()
	if err != nil {
		return err
	}
	return s.validate(def, data)
}

// ResponseDef returns the $defs name of the result of the client→agent method
// (for example "initialize" → "InitializeResponse"), or "" for a method outside the schema.
func ResponseDef(method string) string {
	s, err := loadSchema()
	if err != nil {
		return ""
	}
	return s.agentResponses[method]
}
