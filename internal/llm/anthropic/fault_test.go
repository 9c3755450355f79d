package anthropic

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

func hi() llm.Request { return llm.Request{Messages: []llm.Message{userText("hi")}} }

func asLLMError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *llm.Error", err, err)
	}
	if strings.Contains(e.Message, testKey) {
		t.Fatalf("error message leaks the API key: %q", e.Message)
	}
	return e
}

func TestHTTPErrorsBecomeActionableLLMErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fault     fakeanthropic.Fault
		status    int
		retryable bool
		message   string
	}{
		{fakeanthropic.RateLimit(0), 429, true,
			"Anthropic returned 429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit"},
		{fakeanthropic.ServerError(), 500, true, "Anthropic returned 500 api_error: Internal server error"},
		{fakeanthropic.Overloaded(), 529, true, "Anthropic returned 529 overloaded_error: Overloaded"},
		{fakeanthropic.HTTPError(400, "invalid_request_error", "messages: at least one message is required"), 400, false,
			"Anthropic returned 400 invalid_request_error: messages: at least one message is required"},
		// A server that echoes the key must not get it into the message.
		{fakeanthropic.HTTPError(401, "authentication_error", "invalid x-api-key "+testKey), 401, false,
			"Anthropic returned 401 authentication_error: invalid x-api-key [redacted] (check the API key: ANTHROPIC_API_KEY or `corvid auth login`)"},
	}
	fake := fakeanthropic.New(t)
	for _, c := range cases {
		fake.Enqueue(fakeanthropic.Response{Fault: c.fault})
	}
	m := newTestModel(t, fake, 0)
	for _, c := range cases {
		evs, err := collect(t.Context(), m, hi())
		if len(evs) != 0 {
			t.Errorf("%d: events before the error: %+v", c.status, evs)
		}
		e := asLLMError(t, err)
		if e.Provider != "anthropic" || e.Status != c.status || e.Retryable != c.retryable || e.Message != c.message {
			t.Errorf("got %+v\nwant status %d retryable %v message %q", e, c.status, c.retryable, c.message)
		}
	}
	if n := len(fake.Requests()); n != len(cases) {
		t.Fatalf("%d requests for %d failures: the provider must not retry on its own", n, len(cases))
	}
}

func TestMidStreamErrorKeepsWhatWasStreamed(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	// message_start, content_block_start, one text delta, then the error.
	fake.Enqueue(fakeanthropic.Response{
		Blocks: []fakeanthropic.Block{fakeanthropic.Text("partial answer that goes on")},
		Fault:  fakeanthropic.StreamError(3, "overloaded_error", "Overloaded"),
	})
	evs, err := collect(t.Context(), newTestModel(t, fake, 0), hi())
	if len(evs) != 1 || evs[0].Type != llm.EventTextDelta || evs[0].Text != "partial " {
		t.Fatalf("events = %+v, want the one delta sent before the error", evs)
	}
	e := asLLMError(t, err)
	if !e.Retryable || e.Status != 529 || e.Message != "Anthropic stream failed with overloaded_error: Overloaded" {
		t.Fatalf("err = %+v", e)
	}
}

func TestErrorEventBeforeContentIsRetriedByWithRetry(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(
		fakeanthropic.Response{Fault: fakeanthropic.StreamError(1, "overloaded_error", "Overloaded")},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("second time lucky")}},
	)
	var rec sleepRecorder
	m := llm.WithRetry(newTestModel(t, fake, 0), llm.RetryPolicy{Sleep: rec.sleep})
	evs := mustCollect(t, m, hi())
	if text := eventsOf(evs, llm.EventTextDelta); len(text) == 0 || len(fake.Requests()) != 2 {
		t.Fatalf("events %+v after %d requests", evs, len(fake.Requests()))
	}
}

func TestCutStreamEndsWithRetryableError(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{
		Blocks: []fakeanthropic.Block{fakeanthropic.Text("this text is cut off mid-block")},
		Fault:  fakeanthropic.Cut(4),
	})
	evs, err := collect(t.Context(), newTestModel(t, fake, 0), hi())
	if len(evs) != 2 {
		t.Fatalf("events = %+v, want the two deltas before the cut", evs)
	}
	e := asLLMError(t, err)
	if !e.Retryable || !strings.HasPrefix(e.Message, "Anthropic connection failed (connection closed early): ") {
		t.Fatalf("err = %+v", e)
	}
}

func TestConnectionClosedBeforeResponseIsRetryable(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{Fault: fakeanthropic.Cut(0)})
	_, err := collect(t.Context(), newTestModel(t, fake, 0), hi())
	if e := asLLMError(t, err); !e.Retryable {
		t.Fatalf("err = %+v, want retryable", e)
	}
}

// sleepRecorder stands in for the retry wrapper's sleep.
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func TestRateLimitHonoursRetryAfterThenSucceeds(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(
		fakeanthropic.Response{Fault: fakeanthropic.RateLimit(3 * time.Second)},
		fakeanthropic.Response{Fault: fakeanthropic.RateLimit(1 * time.Second)},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")}},
	)
	var rec sleepRecorder
	m := llm.WithRetry(newTestModel(t, fake, 0), llm.RetryPolicy{Sleep: rec.sleep})
	mustCollect(t, m, hi())
	if len(rec.delays) != 2 || rec.delays[0] != 3*time.Second || rec.delays[1] != time.Second {
		t.Fatalf("waits = %v, want the retry-after values [3s 1s]", rec.delays)
	}
	if n := len(fake.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

func TestRateLimitRetryWaitsRealRetryAfter(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(
		fakeanthropic.Response{Fault: fakeanthropic.RateLimit(time.Second)},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")}},
	)
	m := llm.WithRetry(newTestModel(t, fake, 0), llm.RetryPolicy{BaseDelay: time.Millisecond})
	start := time.Now()
	mustCollect(t, m, hi())
	if d := time.Since(start); d < time.Second || d > 5*time.Second {
		t.Fatalf("took %v, want about the 1s retry-after", d)
	}
}

func TestRateLimitExhaustedSaysRetryLater(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	for range 4 {
		fake.Enqueue(fakeanthropic.Response{Fault: fakeanthropic.RateLimit(time.Second)})
	}
	var rec sleepRecorder
	m := llm.WithRetry(newTestModel(t, fake, 0), llm.RetryPolicy{Sleep: rec.sleep})
	_, err := collect(t.Context(), m, hi())
	e := asLLMError(t, err)
	if e.Message != "Anthropic returned 429 rate_limit_error after 4 attempts: Number of request tokens has exceeded your per-minute rate limit; retry later" {
		t.Fatalf("message = %q", e.Message)
	}
}

func TestStallEndsAttemptWithinIdleTimeout(t *testing.T) {
	t.Parallel()
	for name, fault := range map[string]fakeanthropic.Fault{
		"before headers": fakeanthropic.Stall(0, time.Hour),
		"mid-block":      fakeanthropic.Stall(3, time.Hour),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake := fakeanthropic.New(t)
			fake.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("slow and then silent")}, Fault: fault})
			const idle = 300 * time.Millisecond
			start := time.Now()
			_, err := collect(t.Context(), newTestModel(t, fake, idle), hi())
			elapsed := time.Since(start)
			e := asLLMError(t, err)
			if !e.Retryable || e.Message != "Anthropic stream stalled: no data for 300ms" {
				t.Fatalf("err = %+v", e)
			}
			if elapsed < idle || elapsed > idle+2*time.Second {
				t.Fatalf("stall noticed after %v, want about %v", elapsed, idle)
			}
		})
	}
}

func TestSlowStreamWithinIdleTimeoutIsNotAStall(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("tick tock tick tock")}, EventDelay: 100 * time.Millisecond})
	// Each gap is under the idle timeout though the whole stream is not.
	mustCollect(t, newTestModel(t, fake, 400*time.Millisecond), hi())
}

func TestCancelStopsStreamPromptly(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{
		Blocks:     []fakeanthropic.Block{fakeanthropic.Text(strings.Repeat("word ", 200))},
		EventDelay: 200 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var cancelledAt time.Time
	var n int
	var err error
	for ev, e := range newTestModel(t, fake, 0).Stream(ctx, hi()) {
		if e != nil {
			err = e
			break
		}
		n++
		if ev.Type == llm.EventTextDelta && cancelledAt.IsZero() {
			cancelledAt = time.Now()
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v after %d events, want context.Canceled", err, n)
	}
	if d := time.Since(cancelledAt); d > 150*time.Millisecond {
		t.Fatalf("stream ended %v after cancel", d)
	}
}

func TestCancelWhileWaitingForHeaders(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{Fault: fakeanthropic.Stall(0, time.Hour)})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := collect(ctx, newTestModel(t, fake, 0), hi())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestCancelDuringRetryBackoff(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{Fault: fakeanthropic.RateLimit(time.Hour)},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("never")}})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	m := llm.WithRetry(newTestModel(t, fake, 0), llm.RetryPolicy{MaxElapsed: 2 * time.Hour})
	_, err := collect(ctx, m, hi())
	if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("err = %v after %v, want context.Canceled at once", err, time.Since(start))
	}
}

func TestConfiguredIdleTimeoutOverridesTheDefault(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("silent")}, Fault: fakeanthropic.Stall(2, time.Hour)})
	m, err := New(llm.ProviderConfig{Provider: "anthropic", Model: "claude-test-1", APIKey: testKey, BaseURL: fake.URL(), IdleTimeout: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = collect(t.Context(), m, hi())
	if e := asLLMError(t, err); e.Message != "Anthropic stream stalled: no data for 250ms" {
		t.Fatalf("err = %+v", e)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("stall noticed after %v, want about 250ms", elapsed)
	}
	if d, _ := New(llm.ProviderConfig{Provider: "anthropic", Model: "claude-test-1"}); d.(*model).idle != DefaultIdleTimeout {
		t.Errorf("IdleTimeout 0: idle = %v, want DefaultIdleTimeout", d.(*model).idle)
	}
}
