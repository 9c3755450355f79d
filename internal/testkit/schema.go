package testkit

import "github.com/corvid-agent/corvid/internal/acpkit"

// SchemaJSON returns the embedded ACP v1 JSON Schema (internal/acpkit's copy).
func SchemaJSON() []byte { return acpkit.SchemaJSON() }

// ValidateDef validates a JSON value against the ACP v1 schema type #/$defs/<def>
// (for example "SessionNotification"). It is exported for tests of corvid's wire types.
func ValidateDef(def string, data []byte) error { return acpkit.Validate(def, data) }

// ResponseDef returns the $defs name of the result of the client→agent method
// (for example "initialize" → "InitializeResponse"), or "" for a method outside the schema.
func ResponseDef(method string) string {
	s, err := acpkit.LoadSchema()
	if err != nil {
		return ""
	}
	return s.Def(acpkit.AgentResult, method)
}
