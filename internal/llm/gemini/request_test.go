package gemini

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
)

func TestRequestBodyCarriesHistoryImagesSignaturesAndTools(t *testing.T) {
	m := &model{cfg: llm.ProviderConfig{Info: llm.ModelInfo{Reasoning: true}}}
	body := m.request(llm.Request{
		System: "be terse",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("look"), {Type: llm.PartImage, MimeType: "image/png", Data: []byte("PNG")}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Type: llm.PartThinking, Text: "hmm", Signature: "c2ln"},
				{Type: llm.PartText, Text: "ok", Signature: "from another provider!"},
				{Type: llm.PartToolUse, ToolUseID: "gemini_call_2", ToolName: "read", Input: json.RawMessage(`{"path": "a.png"}`), Signature: "c2ln"},
				{Type: llm.PartToolUse, ToolUseID: "call-9", ToolName: "ls", Input: json.RawMessage(`{}`)},
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{
				{Type: llm.PartToolResult, ToolUseID: "gemini_call_2", Text: "an image", Images: []llm.Part{{Type: llm.PartImage, MimeType: "image/png", Data: []byte("IMG")}}},
				{Type: llm.PartToolResult, ToolUseID: "call-9", Text: "denied", IsError: true},
			}},
		},
		Tools: []llm.ToolSpec{{Name: "read", InputSchema: json.RawMessage(`{"type": "object"}`)}, {Name: "ls", InputSchema: json.RawMessage(`[]`)}},
	})
	got, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"contents":[` +
		`{"role":"user","parts":[{"text":"look"},{"inlineData":{"mimeType":"image/png","data":"UE5H"}}]},` +
		`{"role":"model","parts":[{"text":"hmm","thought":true,"thoughtSignature":"c2ln"},{"text":"ok"},` +
		`{"functionCall":{"name":"read","args":{"path":"a.png"}},"thoughtSignature":"c2ln"},` +
		`{"functionCall":{"id":"call-9","name":"ls","args":{}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"read","response":{"output":"an image"}}},` +
		`{"functionResponse":{"id":"call-9","name":"ls","response":{"error":"denied"}}},` +
		`{"inlineData":{"mimeType":"image/png","data":"SU1H"}}]}],` +
		`"systemInstruction":{"role":"user","parts":[{"text":"be terse"}]},` +
		`"tools":[{"functionDeclarations":[{"name":"read","parametersJsonSchema":{"type":"object"}},` +
		`{"name":"ls","parametersJsonSchema":{"type":"object","properties":{}}}]}],` +
		`"generationConfig":{"thinkingConfig":{"includeThoughts":true}}}`
	if !bytes.Equal(got, []byte(want)) {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
}

func TestRequestWithoutOptionsSendsNoGenerationConfig(t *testing.T) {
	got, _ := json.Marshal((&model{}).request(llm.Request{}))
	if string(got) != `{"contents":[]}` {
		t.Errorf("body = %s", got)
	}
}
