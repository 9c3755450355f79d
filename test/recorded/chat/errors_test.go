package chat

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// OpenRouter error bodies in its documented shape
// (openrouter.ai/docs/api-reference/errors: error.code is the HTTP status as
// a number; error.metadata {provider_name, raw} carries the upstream
// provider's own error, raw often its JSON as a string). The raw errors are
// Anthropic's, in Anthropic's documented error shape. No public recording of
// one was found.
const (
	openRouterRateLimited = `{"error":{"code":429,"message":"Provider returned error","metadata":{"provider_name":"Anthropic","raw":"{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"This request would exceed the rate limit for your organization of 400,000 input tokens per minute\"}}"}}}`
	openRouterRefused     = `{"error":{"code":400,"message":"Provider returned error","metadata":{"provider_name":"Anthropic","raw":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.1.content.0.thinking.signature: Field required\"}}"}}}`
)

// TestOpenRouterErrorSaysTheStatusOnceAndKeepsTheUpstreamCause: the editor
// gets one line that names OpenRouter and gives the status once (not
// "returned 429 429") and keeps the upstream provider's name and message
// from error.metadata: as it is for a refusal, and in the "after N
// attempts" summary of a rate limit.
func TestOpenRouterErrorSaysTheStatusOnceAndKeepsTheUpstreamCause(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		wants  []string
	}{
		{"429", http.StatusTooManyRequests, openRouterRateLimited, []string{"after 1 attempt", "Anthropic", "would exceed the rate limit for your organization"}},
		{"400", http.StatusBadRequest, openRouterRefused, []string{"Provider returned error", "Anthropic", "messages.1.content.0.thinking.signature: Field required"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := replay.New(t, replay.JSONError(tc.status, []byte(tc.body)))
			c := replay.Open(t, preset("openrouter", "anthropic/claude-sonnet-4.6"), srv, []string{"CORVID_RETRY_MAX_ATTEMPTS=1"})
			_, rerr := c.Prompt(c.Ctx, c.SID, "hello")
			if rerr == nil {
				t.Fatalf("prompt succeeded against a %d", tc.status)
			}
			msg := rerr.Message
			t.Logf("error %d: %s", rerr.Code, msg)
			if !strings.HasPrefix(msg, "OpenRouter returned "+tc.name) {
				t.Errorf("error %q does not begin with \"OpenRouter returned %s\"", msg, tc.name)
			}
			if n := strings.Count(msg, tc.name); n != 1 {
				t.Errorf("error %q gives the status %s %d times, want once", msg, tc.name, n)
			}
			for _, want := range tc.wants {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q drops %q (error.message and error.metadata)", msg, want)
				}
			}
			if strings.Contains(msg, replay.Key) || strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error %q leaks the key or spans lines", msg)
			}
		})
	}
}

// TestErrorInsideA200StreamEndsTheTurnWithItsMessage: OpenRouter documents
// that an error after streaming began comes as a chunk with a top-level
// "error" (code, message) and finish_reason "error", inside a 200 stream.
// The first chunks are a real Groq recording's; the turn must end with an
// error naming the cause, and the text streamed so far must have reached
// the editor.
func TestErrorInsideA200StreamEndsTheTurnWithItsMessage(t *testing.T) {
	lines := replay.Lines(replay.Read(t, "groq-reasoning.chunks.txt"))
	head := append(bytes.Join(lines[:5], []byte("\n")), '\n')
	errChunk := `{"id":"gen-1","object":"chat.completion.chunk","created":1770770846,"model":"qwen/qwen3-32b","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}` + "\n"
	srv := replay.New(t, replay.Chunks(append(head, errChunk...), false))
	c := replay.Open(t, preset("openrouter", "qwen/qwen3-32b"), srv, []string{"CORVID_RETRY_MAX_ATTEMPTS=1"})
	_, rerr := c.Prompt(c.Ctx, c.SID, "hello")
	if rerr == nil {
		t.Fatal("prompt succeeded; the stream carried an error")
	}
	t.Logf("error %d: %s", rerr.Code, rerr.Message)
	if !strings.HasPrefix(rerr.Message, "OpenRouter ") || !strings.Contains(rerr.Message, "Provider disconnected unexpectedly") {
		t.Errorf("error %q should name OpenRouter and the stream's message", rerr.Message)
	}
	if testkit.TextOf(c.Updates(c.SID), "agent_thought_chunk") == "" {
		t.Error("the reasoning streamed before the error never reached the editor")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests: a failure after streamed output must not be retried", n)
	}
}

// TestGroqRateLimitWaitsForRetryAfterThenReplaysTheRecordedAnswer: Groq
// answers a rate limit with 429, a retry-after header in seconds and an
// OpenAI-style error body (code rate_limit_exceeded), per its documented
// rate-limit answer; the values here are ours. corvid must wait at least
// retry-after (the backoff alone is 10 ms here), then run the recorded tool
// call and deliver the follow-up.
func TestGroqRateLimitWaitsForRetryAfterThenReplaysTheRecordedAnswer(t *testing.T) {
	const rateLimited = `{"error":{"message":"Rate limit reached for model ` + "`llama-3.3-70b-versatile`" + ` in organization ` + "`org_replay`" + ` service tier ` + "`on_demand`" + ` on tokens per minute (TPM): Limit 12000, Used 11950, Requested 420. Please try again in 1s.","type":"tokens","code":"rate_limit_exceeded"}}`
	first := replay.Read(t, "groq-tool-call.chunks.txt")
	srv := replay.New(t,
		replay.JSONError(http.StatusTooManyRequests, []byte(rateLimited), "retry-after: 1"),
		replay.ChatChunks(first),
		replay.ChatChunks(replay.Read(t, "mistral-text.chunks.txt")))
	c := replay.Open(t, preset("groq", "llama-3.3-70b-versatile"), srv, []string{"CORVID_RETRY_BASE_DELAY=10ms"})
	if stop, rerr := c.Prompt(c.Ctx, c.SID, "What is the weather?"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: stop %q, error %v", stop, rerr)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (the 429, its retry, the tool follow-up)", len(reqs))
	}
	// A lower bound only: retrying early is the defect; late is scheduling.
	if gap := reqs[1].At.Sub(reqs[0].At); gap < time.Second {
		t.Errorf("the retry came %v after the 429; retry-after asked for 1s", gap)
	}
	if string(reqs[1].Body) != string(reqs[0].Body) {
		t.Error("the retry's body differs from the first attempt's")
	}
	checkToolFollowUp(t, reqs[2], readRecording(t, first))
	validateMessages(t, reqs[2])
}
