package reliability

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

const faultAnswer = "The fault is behind us, and this answer is whole."

// outcome is what a faulty model call may end in.
type outcome int

const (
	retried   outcome = iota // the fault is retried and the turn succeeds
	failed                   // the prompt answers a JSON-RPC error
	eitherWay                // after partial output corvid may do either
)

// Every provider fault the fake Anthropic API can inject ends the prompt within
// seconds, in a retry that succeeds or in a JSON-RPC error with a code and a
// one-line message, never a hang; the process stays usable and a new process
// loads the session.
func TestProviderFaultsEndInRetryOrCleanErrorAndKeepTheSession(t *testing.T) {
	ok := fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text(faultAnswer)}, ChunkSize: 6}
	withFault := func(f fakeanthropic.Fault) fakeanthropic.Response {
		r := ok
		r.Fault = f
		return r
	}
	cases := []struct {
		name  string
		queue []fakeanthropic.Response
		want  outcome
	}{
		{"429 with retry-after", []fakeanthropic.Response{withFault(fakeanthropic.RateLimit(time.Second)), ok}, retried},
		{"500", []fakeanthropic.Response{withFault(fakeanthropic.ServerError()), ok}, retried},
		{"529 overloaded", []fakeanthropic.Response{withFault(fakeanthropic.Overloaded()), ok}, retried},
		{"connection cut before a byte", []fakeanthropic.Response{withFault(fakeanthropic.Cut(0)), ok}, retried},
		{"headers stall", []fakeanthropic.Response{withFault(fakeanthropic.Stall(0, 3*time.Second)), ok}, retried},
		{"overloaded error event before output", []fakeanthropic.Response{withFault(fakeanthropic.StreamError(1, "overloaded_error", "Overloaded")), ok}, retried},
		{"connection cut mid-text", []fakeanthropic.Response{withFault(fakeanthropic.Cut(5)), ok}, eitherWay},
		{"stall mid-text", []fakeanthropic.Response{withFault(fakeanthropic.Stall(5, 3*time.Second)), ok}, eitherWay},
		{"api error event mid-text", []fakeanthropic.Response{withFault(fakeanthropic.StreamError(5, "api_error", "Internal server error")), ok}, eitherWay},
		{"500 every time", []fakeanthropic.Response{
			withFault(fakeanthropic.ServerError()), withFault(fakeanthropic.ServerError()), withFault(fakeanthropic.ServerError()),
			withFault(fakeanthropic.ServerError()), withFault(fakeanthropic.ServerError()), ok}, failed},
		{"401 bad key", []fakeanthropic.Response{withFault(fakeanthropic.HTTPError(401, "authentication_error", "invalid x-api-key")), ok}, failed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			api := fakeanthropic.New(t)
			api.Enqueue(c.queue...)
			// The last response is the success for the prompt after the fault.
			st := newStore(t, map[string]any{"responses": []any{}})
			opts := testkit.Options{Env: []string{
				"ANTHROPIC_API_KEY=sk-ant-reliability", "ANTHROPIC_BASE_URL=" + api.URL(), "CORVID_KEYRING=off",
				"CORVID_RETRY_BASE_DELAY=10ms", "CORVID_RETRY_MAX_ATTEMPTS=3", "CORVID_STREAM_IDLE_TIMEOUT=1s",
			}}
			args := []string{"acp", "-m", "anthropic:claude-sonnet-4-6"}
			a := st.startWith(t, opts, args...)
			sid := a.newSession(t)

			ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
			defer cancel()
			began := time.Now()
			stop, rerr := a.Prompt(ctx, sid, "hello through the fault")
			took := time.Since(began)
			text := testkit.TextOf(a.Updates(sid), "agent_message_chunk")
			got := retried
			switch {
			case rerr != nil && rerr.Code == testkit.CodeNoResponse:
				t.Fatalf("no answer within 10s: the fault hung the prompt")
			case rerr != nil:
				got = failed
				t.Logf("error %d after %v, %d requests: %s", rerr.Code, took.Round(time.Millisecond), len(api.Requests()), rerr.Message)
				if rerr.Code == 0 || rerr.Message == "" || strings.ContainsAny(rerr.Message, "\n\r") || len(rerr.Message) > 300 {
					t.Errorf("error %+v: want a code and a one-line message", rerr)
				}
			default:
				t.Logf("stop %q after %v, %d requests", stop, took.Round(time.Millisecond), len(api.Requests()))
				if stop != "end_turn" {
					t.Errorf("stop reason %q, want end_turn", stop)
				}
				if !strings.HasSuffix(text, faultAnswer) {
					t.Errorf("streamed %q, want it to end with the whole answer", text)
				}
				if text != faultAnswer {
					t.Logf("the client saw a partial attempt before the retry: %q", text)
				}
			}
			if c.want != eitherWay && got != c.want {
				t.Errorf("outcome %v, want %v (0 retried, 1 failed)", got, c.want)
			}

			// The process stays usable: whatever the queue still holds (the
			// faults the retries did not consume, then a success) serves the
			// next prompt.
			if api.Pending() > 0 {
				if stop, rerr := a.Prompt(ctx, sid, " and again"); rerr != nil || stop != "end_turn" {
					t.Errorf("prompt after the fault: stop %q, error %v", stop, rerr)
				}
			}
			if code, took := a.Close(); code != 0 || took > hangLimit {
				t.Errorf("exit %d after %v on stdin EOF", code, took)
			}

			b := st.startWith(t, opts, args...)
			replay := b.load(t, sid)
			if u := testkit.TextOf(replay, "user_message_chunk"); !strings.HasPrefix(u, "hello through the fault") {
				t.Errorf("replayed prompt %q", u)
			}
			if r := testkit.TextOf(replay, "agent_message_chunk"); !strings.HasPrefix(r, text) {
				t.Errorf("replayed answer %q, want it to start with what the faulty turn streamed, %q", r, text)
			}
			checkStoreIntact(t, b.ctx, st.dbPath(), sid)
			b.Close()
		})
	}
}
