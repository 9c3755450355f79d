package chat

import (
	"testing"

	"github.com/corvid-agent/corvid/test/recorded/openaischema"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// roleSchema names the OpenAPI schema of a Chat Completions request
// message of each role.
var roleSchema = map[string]string{
	"system":    "ChatCompletionRequestSystemMessage",
	"developer": "ChatCompletionRequestDeveloperMessage",
	"user":      "ChatCompletionRequestUserMessage",
	"assistant": "ChatCompletionRequestAssistantMessage",
	"tool":      "ChatCompletionRequestToolMessage",
}

// validateMessages checks every message of req against OpenAI's published
// schema of its role. Provider extensions (reasoning_content) are allowed:
// the schemas do not forbid extra properties.
func validateMessages(t *testing.T, req replay.Request) {
	t.Helper()
	for i, m := range req.Items(t, "messages") {
		role, _ := m["role"].(string)
		def, ok := roleSchema[role]
		if !ok {
			t.Errorf("message %d has role %q", i, role)
			continue
		}
		if err := openaischema.Validate(t, def, m); err != nil {
			t.Errorf("message %d is not a valid %s per OpenAI's OpenAPI schema: %v\n%s", i, def, err, js(m))
		}
	}
	if e, ok := req.JSON(t)["reasoning_effort"]; ok {
		if err := openaischema.Validate(t, "ReasoningEffort", e); err != nil {
			t.Errorf("reasoning_effort %v is not a valid ReasoningEffort: %v", e, err)
		}
	}
}
