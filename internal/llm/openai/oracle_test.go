package openai

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
)

// The official SDK, github.com/openai/openai-go, is the oracle of these
// tests: it is linked into this package's tests only (the binary speaks
// net/http, internal/deps_test.go keeps it that way).

// sdkExtras are the fields corvid sends that the SDK's parameter types do
// not model, by where they occur; each is a documented extension of one
// preset (see chatParams and chatThinking).
var sdkExtras = map[string]bool{
	".stream":                        true, // the SDK adds it per call (NewStreaming)
	".reasoning":                     true, // OpenRouter's unified reasoning control (chat only)
	".messages[*].reasoning_content": true, // DeepSeek's thinking mode
}

// TestRequestBodiesDecodeAsSDKParams decodes every golden request body
// corvid builds with the SDK's own parameter types
// (sdk.ChatCompletionNewParams, responses.ResponseNewParams), encodes it
// again with the SDK and requires the same JSON: every field corvid sends
// is one the SDK knows, with the type and shape the SDK gives it (a string
// where it wants a string, a content list where it wants one, [] kept as
// []), apart from sdkExtras.
func TestRequestBodiesDecodeAsSDKParams(t *testing.T) {
	for _, gc := range goldenCases(t) {
		t.Run(gc.name, func(t *testing.T) {
			m, err := newModel(gc.p, llmConfig(gc), nil)
			if err != nil {
				t.Fatal(err)
			}
			req := gc.req
			req.Model = gc.model
			var body []byte
			var again []byte
			if gc.p.API == config.APIResponses {
				body, _ = json.Marshal(m.responsesParams(req))
				again, err = responsesRoundTrip(t, body)
			} else {
				body, _ = json.Marshal(m.chatParams(req))
				var p sdk.ChatCompletionNewParams
				if err := json.Unmarshal(body, &p); err != nil {
					t.Fatalf("the SDK refuses corvid's body: %v\n%s", err, body)
				}
				again, err = json.Marshal(p)
			}
			if err != nil {
				t.Fatal(err)
			}
			var ours, theirs any
			_ = json.Unmarshal(body, &ours)
			_ = json.Unmarshal(again, &theirs)
			for _, at := range jsonDiff("", ours, theirs) {
				if !sdkExtras[starred(at)] {
					t.Errorf("%s: corvid sends %s, the SDK's round trip %s", at, jsonAt(ours, at), jsonAt(theirs, at))
				}
			}
		})
	}
}

// responsesRoundTrip decodes a Responses request body with the SDK's
// types and encodes it again. The SDK cannot decode the input list as one
// union (its item union wants a "type", which an EasyInputMessage may
// leave out, as corvid does), so each item is decoded with the parameter
// type of its kind.
func responsesRoundTrip(t *testing.T, body []byte) ([]byte, error) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	var items []map[string]any
	if err := json.Unmarshal(top["input"], &items); err != nil {
		return nil, err
	}
	delete(top, "input")
	rest, _ := json.Marshal(top)
	var p responses.ResponseNewParams
	if err := json.Unmarshal(rest, &p); err != nil {
		t.Fatalf("the SDK refuses corvid's body: %v\n%s", err, rest)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	var input []any
	for i, it := range items {
		raw, _ := json.Marshal(it)
		var item any
		switch it["type"] {
		case "reasoning":
			item = &responses.ResponseReasoningItemParam{}
		case "function_call":
			item = &responses.ResponseFunctionToolCallParam{}
		case "function_call_output":
			item = &responses.ResponseInputItemFunctionCallOutputParam{}
		case nil:
			item = &responses.EasyInputMessageParam{}
		default:
			t.Fatalf("input item %d has type %v, which corvid does not send", i, it["type"])
		}
		if err := json.Unmarshal(raw, item); err != nil {
			t.Fatalf("the SDK refuses input item %d: %v\n%s", i, err, raw)
		}
		b, err := json.Marshal(item)
		if err != nil {
			return nil, err
		}
		var v any
		_ = json.Unmarshal(b, &v)
		input = append(input, v)
	}
	out["input"] = input
	return json.Marshal(out)
}

// starred replaces list indexes in a jsonDiff path by [*].
func starred(path string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '[')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		j := strings.IndexByte(path[i:], ']')
		b.WriteString(path[:i] + "[*]")
		path = path[i+j+1:]
	}
}

// jsonAt is the JSON text of the value at a jsonDiff path, or "nothing".
func jsonAt(v any, path string) string {
	for _, seg := range splitPath(path) {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[seg]; !ok {
				return "nothing"
			}
		case []any:
			var i int
			if json.Unmarshal([]byte(seg), &i) != nil || i >= len(x) {
				return "nothing"
			}
			v = x[i]
		default:
			return "nothing"
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func splitPath(path string) []string {
	path = strings.NewReplacer("[", ".", "]", "").Replace(path)
	return slices.DeleteFunc(strings.Split(path, "."), func(s string) bool { return s == "" })
}

func llmConfig(gc goldenCase) llm.ProviderConfig {
	return llm.ProviderConfig{Provider: gc.p.Name, Model: gc.model, APIKey: gc.key, Info: gc.info}
}
