package openai

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// TestErrorEventInsideA200StreamEndsTheTurnWithTheAPIsMessage replays a
// real gpt-5-nano stream that, after response.created, carries an "error"
// event (insufficient_quota) and response.failed. The turn must end with
// one sentence naming OpenAI and the API's message, and, the cause being
// a quota, without retrying.
func TestErrorEventInsideA200StreamEndsTheTurnWithTheAPIsMessage(t *testing.T) {
	srv := replay.New(t, replay.Chunks(replay.Read(t, "openai-error.1.chunks.txt"), false))
	c := replay.Open(t, withModel(openaiProvider, "openai:gpt-5-nano"), srv, []string{"CORVID_RETRY_BASE_DELAY=10ms"})
	_, rerr := c.Prompt(c.Ctx, c.SID, "hello")
	if rerr == nil {
		t.Fatal("prompt succeeded; the stream carried an error")
	}
	t.Logf("error %d: %s", rerr.Code, rerr.Message)
	for _, want := range []string{"OpenAI", "insufficient_quota", "You exceeded your current quota"} {
		if !strings.Contains(rerr.Message, want) {
			t.Errorf("error %q does not say %q", rerr.Message, want)
		}
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests: an exhausted quota is not retried", n)
	}
}

// TestQuota429IsNotRetried serves the real body OpenAI answers with 429
// when the account's quota is spent (insufficient_quota). Unlike a rate
// limit, waiting does not help (OpenAI's error-code guide: buy credits or
// raise the limit), so corvid must not retry it; the message must keep the
// API's explanation.
func TestQuota429IsNotRetried(t *testing.T) {
	body := replay.Read(t, "openai-error.1.json")
	srv := replay.New(t,
		replay.JSONError(http.StatusTooManyRequests, body),
		replay.JSONError(http.StatusTooManyRequests, body),
		replay.JSONError(http.StatusTooManyRequests, body),
		replay.JSONError(http.StatusTooManyRequests, body))
	c := replay.Open(t, withModel(openaiProvider, "openai:gpt-5-nano"), srv, []string{"CORVID_RETRY_BASE_DELAY=10ms"})
	_, rerr := c.Prompt(c.Ctx, c.SID, "hello")
	if rerr == nil {
		t.Fatal("prompt succeeded against a 429")
	}
	t.Logf("error %d: %s", rerr.Code, rerr.Message)
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: insufficient_quota is not a rate limit", n)
	}
	if !strings.Contains(rerr.Message, "You exceeded your current quota") {
		t.Errorf("error %q drops the API's explanation", rerr.Message)
	}
}

// TestRateLimitWaitsForRetryAfterMsThenReplaysTheRecordedAnswer: a 429
// with OpenAI's rate-limit headers (retry-after-ms, and retry-after in
// whole seconds) and its rate_limit_exceeded body shape, then a real
// recorded answer. corvid must wait at least what retry-after-ms asks (the
// backoff alone is 10 ms here) and then deliver the recorded text.
func TestRateLimitWaitsForRetryAfterMsThenReplaysTheRecordedAnswer(t *testing.T) {
	const rateLimited = `{"error":{"message":"Rate limit reached for gpt-5-nano in organization org-replay on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 1.2s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	answer := replay.Split(replay.Read(t, "openai-reasoning-encrypted-content.1.chunks.txt"), responseCreated)[3]
	srv := replay.New(t,
		replay.JSONError(http.StatusTooManyRequests, []byte(rateLimited), "retry-after-ms: 1200", "retry-after: 2"),
		replay.Chunks(answer, false))
	c := replay.Open(t, withModel(openaiProvider, "openai:gpt-5-nano"), srv, []string{"CORVID_RETRY_BASE_DELAY=10ms"})
	if stop, rerr := c.Prompt(c.Ctx, c.SID, "hello"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: stop %q, error %v", stop, rerr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (the 429, then the retry)", len(reqs))
	}
	// A lower bound only: retrying early is the defect; late is scheduling.
	if gap := reqs[1].At.Sub(reqs[0].At); gap < 1200*time.Millisecond {
		t.Errorf("the retry came %v after the 429; retry-after-ms asked for 1.2s", gap)
	}
	last, _ := completedOutput(t, answer)
	want := last[0]["content"].([]any)[0].(map[string]any)["text"].(string)
	if got := textOf(c); got != want {
		t.Errorf("message %q, want the recorded %q", got, want)
	}
}
