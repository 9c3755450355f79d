// Package openaischema checks request values corvid sends to OpenAI-protocol
// APIs against hand-written shapes read from OpenAI's published OpenAPI
// document: the schema side of the recorded Responses and Chat Completions
// tests (test/recorded/openai, test/recorded/chat).
package openaischema

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// The request shapes below are the parts of OpenAI's published OpenAPI
// document (openai/openai-openapi, openapi.yaml at
// f85dbe223d40e1a31cba812ab2d755c7e98a92a3, components.schemas.<Name>)
// that corvid's requests must meet: each schema's `required` list, the
// enums of its `type`/`role`, and the types of the fields corvid sends.
// They are written out by hand, not generated: the checks name the schema
// they come from so a reviewer can compare them with the document.
//
// Read from the document's text: ReasoningItem, SummaryTextContent,
// ReasoningEffort, ChatCompletionRequest{System,Developer,User,Assistant,
// Tool}Message, ChatCompletionRequestMessageContentPart{Text,Refusal},
// ChatCompletionMessageToolCall and ChatCompletionMessageCustomToolCall.
// FunctionToolCall, FunctionCallOutputItemParam and EasyInputMessage follow
// the same document's schemas of those names.
var shapes = map[string]func(v any) error{
	// components.schemas.ReasoningItem: required [id, summary, type];
	// summary is an array of SummaryTextContent (required [type, text],
	// type summary_text); encrypted_content is a string or null.
	"ReasoningItem": object(
		required("id", "summary", "type"),
		enum("type", "reasoning"),
		isString("id"),
		stringOrNull("encrypted_content"),
		arrayOf("summary", object(required("type", "text"), enum("type", "summary_text"), isString("text"))),
		enum("status", "in_progress", "completed", "incomplete"),
	),
	// components.schemas.FunctionToolCall: required [type, call_id, name,
	// arguments], type function_call.
	"FunctionToolCall": object(
		required("type", "call_id", "name", "arguments"),
		enum("type", "function_call"),
		isString("call_id"), isString("name"), isString("arguments"), isString("id"),
		enum("status", "in_progress", "completed", "incomplete"),
	),
	// components.schemas.FunctionCallOutputItemParam: required [call_id,
	// type, output], type function_call_output; output is a string or a
	// list of input_text/input_image/input_file parts.
	"FunctionCallOutputItemParam": object(
		required("call_id", "type", "output"),
		enum("type", "function_call_output"),
		isString("call_id"),
		stringOrParts("output", false, inputParts),
	),
	// components.schemas.EasyInputMessage: required [role, content], role
	// user/assistant/system/developer, type message; content is a string
	// or an InputMessageContentList.
	"EasyInputMessage": object(
		required("role", "content"),
		enum("role", "user", "assistant", "system", "developer"),
		enum("type", "message"),
		stringOrParts("content", false, inputParts),
	),
	// components.schemas.ChatCompletionRequestSystemMessage: required
	// [content, role], role system; content a string or >=1 text parts.
	"ChatCompletionRequestSystemMessage": object(
		required("content", "role"), enum("role", "system"), isString("name"),
		stringOrParts("content", false, textPart),
	),
	// components.schemas.ChatCompletionRequestDeveloperMessage: likewise
	// with role developer.
	"ChatCompletionRequestDeveloperMessage": object(
		required("content", "role"), enum("role", "developer"), isString("name"),
		stringOrParts("content", false, textPart),
	),
	// components.schemas.ChatCompletionRequestUserMessage: required
	// [content, role], role user; content a string or >=1 parts.
	"ChatCompletionRequestUserMessage": object(
		required("content", "role"), enum("role", "user"), isString("name"),
		stringOrParts("content", false, userPart),
	),
	// components.schemas.ChatCompletionRequestAssistantMessage: required
	// [role], role assistant; content a string, >=1 text/refusal parts, or
	// null; tool_calls a ChatCompletionMessageToolCalls array.
	"ChatCompletionRequestAssistantMessage": object(
		required("role"), enum("role", "assistant"), isString("name"),
		stringOrParts("content", true, assistantPart),
		stringOrNull("refusal"),
		arrayOf("tool_calls", toolCall),
	),
	// components.schemas.ChatCompletionRequestToolMessage: required [role,
	// content, tool_call_id], role tool; content a string or >=1 text parts.
	"ChatCompletionRequestToolMessage": object(
		required("role", "content", "tool_call_id"), enum("role", "tool"),
		isString("tool_call_id"),
		stringOrParts("content", false, textPart),
	),
	// components.schemas.ReasoningEffort: none, minimal, low, medium, high,
	// xhigh, max, or null.
	"ReasoningEffort": func(v any) error {
		if v == nil {
			return nil
		}
		s, ok := v.(string)
		if !ok || !slices.Contains([]string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}, s) {
			return fmt.Errorf("%v is not one of none, minimal, low, medium, high, xhigh, max", v)
		}
		return nil
	},
}

// Validate checks v against the published request schema named def (one
// of the keys of shapes, e.g. "ReasoningItem").
func Validate(t testing.TB, def string, v any) error {
	t.Helper()
	check, ok := shapes[def]
	if !ok {
		t.Fatalf("no OpenAPI shape named %q", def)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return err
	}
	return check(generic)
}

type fieldCheck func(m map[string]any) error

func object(checks ...fieldCheck) func(any) error {
	return func(v any) error {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not an object", show(v))
		}
		for _, c := range checks {
			if err := c(m); err != nil {
				return err
			}
		}
		return nil
	}
}

func required(names ...string) fieldCheck {
	return func(m map[string]any) error {
		for _, n := range names {
			if _, ok := m[n]; !ok {
				return fmt.Errorf("required property %q is missing", n)
			}
		}
		return nil
	}
}

// enum checks a property, when present, is one of values.
func enum(name string, values ...string) fieldCheck {
	return func(m map[string]any) error {
		v, ok := m[name]
		if !ok {
			return nil
		}
		if s, ok := v.(string); !ok || !slices.Contains(values, s) {
			return fmt.Errorf("%s is %s, not one of %q", name, show(v), values)
		}
		return nil
	}
}

func isString(name string) fieldCheck {
	return func(m map[string]any) error {
		if v, ok := m[name]; ok {
			if _, ok := v.(string); !ok {
				return fmt.Errorf("%s is %s, not a string", name, show(v))
			}
		}
		return nil
	}
}

func stringOrNull(name string) fieldCheck {
	return func(m map[string]any) error {
		if v, ok := m[name]; ok && v != nil {
			if _, ok := v.(string); !ok {
				return fmt.Errorf("%s is %s, not a string or null", name, show(v))
			}
		}
		return nil
	}
}

func arrayOf(name string, item func(any) error) fieldCheck {
	return func(m map[string]any) error {
		v, ok := m[name]
		if !ok {
			return nil
		}
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s is %s, not an array", name, show(v))
		}
		for i, it := range a {
			if err := item(it); err != nil {
				return fmt.Errorf("%s[%d]: %w", name, i, err)
			}
		}
		return nil
	}
}

// stringOrParts checks a content-like property: a string, a non-empty
// array of parts each accepted by part, or (if nullable) null.
func stringOrParts(name string, nullable bool, part func(any) error) fieldCheck {
	return func(m map[string]any) error {
		v, ok := m[name]
		if !ok {
			return nil
		}
		switch v := v.(type) {
		case nil:
			if nullable {
				return nil
			}
			return fmt.Errorf("%s is null", name)
		case string:
			return nil
		case []any:
			if len(v) == 0 {
				return fmt.Errorf("%s is an empty array", name)
			}
			for i, p := range v {
				if err := part(p); err != nil {
					return fmt.Errorf("%s[%d]: %w", name, i, err)
				}
			}
			return nil
		}
		return fmt.Errorf("%s is %s, not a string or an array of parts", name, show(v))
	}
}

// Content parts: ChatCompletionRequestMessageContentPartText (required
// [type, text]), ...Refusal (required [type, refusal]), ...Image (required
// [type, image_url]), ...Audio (required [type, input_audio]), ...File
// (required [type, file]).
var (
	textPart = object(required("type", "text"), enum("type", "text"), isString("text"))
	userPart = partOf(map[string]string{
		"text": "text", "image_url": "image_url", "input_audio": "input_audio", "file": "file",
	})
	assistantPart = partOf(map[string]string{"text": "text", "refusal": "refusal"})
	// InputContent of the Responses API: input_text (required [type,
	// text]), input_image and input_file.
	inputParts = partOf(map[string]string{"input_text": "text", "input_image": "", "input_file": ""})
)

// partOf accepts an object whose type is a key of types and which carries
// the property that type requires (none when the value is "").
func partOf(types map[string]string) func(any) error {
	return func(v any) error {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not an object", show(v))
		}
		typ, _ := m["type"].(string)
		field, ok := types[typ]
		if !ok {
			return fmt.Errorf("part type %s is not allowed here", show(m["type"]))
		}
		if field != "" {
			if _, ok := m[field]; !ok {
				return fmt.Errorf("%s part lacks required %q", typ, field)
			}
		}
		return nil
	}
}

// toolCall is an item of ChatCompletionMessageToolCalls: a
// ChatCompletionMessageToolCall (required [id, type, function], function
// required [name, arguments]) or a ChatCompletionMessageCustomToolCall
// (required [id, type, custom], custom required [name, input]).
func toolCall(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s is not an object", show(v))
	}
	switch m["type"] {
	case "function":
		return object(required("id", "type", "function"), isString("id"), func(m map[string]any) error {
			return object(required("name", "arguments"), isString("name"), isString("arguments"))(m["function"])
		})(m)
	case "custom":
		return object(required("id", "type", "custom"), isString("id"), func(m map[string]any) error {
			return object(required("name", "input"), isString("name"), isString("input"))(m["custom"])
		})(m)
	}
	return fmt.Errorf("tool call type %s is neither function nor custom", show(m["type"]))
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
