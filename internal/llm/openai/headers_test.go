package openai_test

import (
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/testkit/fakeopenai"
)

// A turn's per-request headers (llm.WithHeaders, e.g. CodeBuddy's
// X-Conversation-Request-ID) reach the wire.
func TestContextHeadersAreSent(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("ok")}})
	env := noKeyring(t)
	env["DEEPSEEK_API_KEY"] = "ds"
	env["DEEPSEEK_BASE_URL"] = fake.BaseURL()
	ctx := llm.WithHeaders(t.Context(), map[string]string{"X-Conversation-Request-ID": "0198a1b2c3d47e5f8a9b0c1d2e3f4a5b"})
	r := run(ctx, open(t, env, "deepseek", "deepseek-chat"), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("hi")}}}})
	if r.err != nil {
		t.Fatal(r.err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("X-Conversation-Request-ID") != "0198a1b2c3d47e5f8a9b0c1d2e3f4a5b" {
		t.Errorf("requests %d, header %q", len(reqs), reqs[0].Header.Get("X-Conversation-Request-ID"))
	}
}
