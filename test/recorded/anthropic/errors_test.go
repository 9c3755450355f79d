package anthropic

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// A refused key is -32000 (auth required), so the editor offers login
// again; not -32603. The body is Anthropic's documented 401 shape.
func TestUnauthorizedIsAuthRequired(t *testing.T) {
	t.Parallel()
	body := []byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`)
	r := start(t, "claude-sonnet-4-5", replay.JSONError(401, body))
	sid := r.Ready(t)
	_, rerr := r.Prompt(r.Ctx, sid, "Hello")
	if rerr == nil || rerr.Code != -32000 || !strings.Contains(rerr.Message, "invalid x-api-key") {
		t.Fatalf("prompt error %v, want -32000 naming the refused key", rerr)
	}
	if n := len(r.Server.Requests()); n != 1 {
		t.Errorf("%d requests: a 401 must not be retried", n)
	}
}

// An unreachable Anthropic base URL says why at once ("connection
// refused"), instead of "connection failed after 4 attempts" after seconds
// of backoff without the cause.
func TestRefusedConnectionKeepsItsCause(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	// The replay server gets no request; ANTHROPIC_BASE_URL names the
	// closed port.
	s := replay.New(t)
	r := replay.StartArgs(t, s, "CORVID_UNUSED_BASE_URL", []string{"acp", "-m", "anthropic:claude-sonnet-4-5"}, "ANTHROPIC_BASE_URL=http://"+addr)
	sid := r.Ready(t)
	start := time.Now()
	_, rerr := r.Prompt(r.Ctx, sid, "Hello")
	if rerr == nil || !strings.Contains(rerr.Message, "connection refused") || !strings.Contains(rerr.Message, addr) {
		t.Fatalf("prompt error %v, want the cause (connection refused) and the address", rerr)
	}
	if strings.Contains(rerr.Message, "attempts") {
		t.Errorf("a refused connection was retried: %q", rerr.Message)
	}
	t.Logf("refused connection reported after %v", time.Since(start))
}

// An error event inside a 200 stream, after text was streamed: the
// recorded text stream cut after its fourth text delta, then Anthropic's
// documented overloaded error event. The text shown so far stays, the
// prompt ends with one sentence naming the error, and nothing is retried
// (the output was already streamed).
func TestErrorEventInsideTheStreamEndsThePrompt(t *testing.T) {
	t.Parallel()
	const overloaded = "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"
	// Events: message_start, content_block_start, ping, then text deltas.
	cut := replay.CutAfter(chunks(t, "anthropic-text.chunks.txt"), 5, overloaded)
	r := start(t, "claude-sonnet-4-5", cut, chunks(t, "anthropic-text.chunks.txt"))
	sid := r.Ready(t)
	_, rerr := r.Prompt(r.Ctx, sid, "Hello")
	if rerr == nil || rerr.Code != -32603 || !strings.Contains(rerr.Message, "overloaded_error") || !strings.Contains(rerr.Message, "Overloaded") {
		t.Fatalf("prompt error %v, want -32603 naming overloaded_error", rerr)
	}
	if got := testkit.TextOf(r.Updates(sid), "agent_message_chunk"); got != "Hello! I" {
		t.Errorf("text before the error %q, want the recorded first deltas \"Hello! I\"", got)
	}
	if n := len(r.Server.Requests()); n != 1 {
		t.Errorf("%d requests: a failure after streamed output must not be retried", n)
	}
	// The session goes on.
	r.MustPrompt(t, sid, "Again", "end_turn")
}

// Anthropic's retry-delay shape: a 429 with a retry-after header (in
// seconds) and its documented rate_limit_error body. The retry waits what
// the header says (logged at debug level with its delay), then the
// recorded answer streams.
func TestRateLimitHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	body := []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`)
	s := replay.New(t, replay.JSONError(429, body, "retry-after: 2"), chunks(t, "anthropic-text.chunks.txt"))
	r := replay.StartArgs(t, s, "ANTHROPIC_BASE_URL", []string{"acp", "--log-level", "debug", "-m", "anthropic:claude-sonnet-4-5"})
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "Hello", "end_turn")
	if !strings.Contains(r.Stderr(), "delay=2s") {
		t.Errorf("no retry logged with delay=2s:\n%s", r.Stderr())
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (one retry)", n)
	}
	if got := testkit.TextOf(r.Updates(sid), "agent_message_chunk"); !strings.HasPrefix(got, "Hello! I") {
		t.Errorf("text %q", got)
	}
}

// The same retry, for a client that advertises session.notices: it is told
// of the retry as a warning notice before the answer streams. (A client that
// does not advertise notices gets none: TestRateLimitHonoursRetryAfter; the
// testkit fails on any notice it was not asked for.)
func TestRetryIsANoticeForAClientThatShowsNotices(t *testing.T) {
	t.Parallel()
	body := []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`)
	s := replay.New(t, replay.JSONError(429, body, "retry-after: 1"), chunks(t, "anthropic-text.chunks.txt"))
	r := replay.StartArgs(t, s, "ANTHROPIC_BASE_URL", []string{"acp", "-m", "anthropic:claude-sonnet-4-5"})
	if _, rerr := r.Initialize(r.Ctx, testkit.LiveUpdates()); rerr != nil {
		t.Fatal(rerr)
	}
	r.SID = r.NewSession(r.Ctx, r.Workspace)
	r.MustPrompt(t, r.SID, "Hello", "end_turn")
	ups := r.Updates(r.SID)
	notices := testkit.OfKind(ups, "notice")
	if len(notices) != 1 {
		t.Fatalf("%d notices, want one for the one retry", len(notices))
	}
	var n struct{ Severity, Title, Description string }
	if err := json.Unmarshal(notices[0].Raw, &n); err != nil {
		t.Fatal(err)
	}
	if n.Severity != "warning" || !strings.Contains(n.Title, "retrying in 1s (attempt 2 of 4)") || !strings.Contains(n.Description, "rate limit") {
		t.Errorf("notice %+v, want a warning naming the wait, the attempt and the cause", n)
	}
	text := testkit.OfKind(ups, "agent_message_chunk")
	if len(text) == 0 || notices[0].Seq > text[0].Seq {
		t.Error("the retry notice did not come before the answer")
	}
}
