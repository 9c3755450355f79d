package gemini_test

import (
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/testkit/fakegemini"
)

// A turn's per-request headers (llm.WithHeaders, e.g. CodeBuddy's
// X-Conversation-Request-ID) reach the wire.
func TestContextHeadersAreSent(t *testing.T) {
	fake := fakegemini.New(t)
	fake.Enqueue(fakegemini.Response{Blocks: []fakegemini.Block{fakegemini.Text("ok")}})
	ctx := llm.WithHeaders(t.Context(), map[string]string{"X-Conversation-Request-ID": "0198a1b2c3d47e5f8a9b0c1d2e3f4a5b"})
	r := run(ctx, open(t, env(t, fake), "gemini-2.5-flash"), hi())
	if r.err != nil {
		t.Fatal(r.err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("X-Conversation-Request-ID") != "0198a1b2c3d47e5f8a9b0c1d2e3f4a5b" {
		t.Fatalf("requests %d: header not sent", len(reqs))
	}
}
