package llm

import (
	"context"
	"errors"
	"iter"
	"sync"
	"testing"
	"time"
)

// scriptedModel plays one scripted attempt per Stream call.
type scriptedModel struct {
	mu       sync.Mutex
	attempts []attempt
	calls    int
}

type attempt struct {
	events []Event
	err    error // yielded after events, if non-nil
}

func (m *scriptedModel) Info() ModelInfo { return ModelInfo{ID: "fake:model"} }

func (m *scriptedModel) Stream(ctx context.Context, req Request) iter.Seq2[Event, error] {
	m.mu.Lock()
	i := m.calls
	m.calls++
	m.mu.Unlock()
	return func(yield func(Event, error) bool) {
		if i >= len(m.attempts) {
			yield(Event{}, errors.New("no attempt scripted"))
			return
		}
		a := m.attempts[i]
		for _, ev := range a.events {
			if !yield(ev, nil) {
				return
			}
		}
		if a.err != nil {
			yield(Event{}, a.err)
		}
	}
}

// sleepRecorder records every wait instead of sleeping.
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleepRecorder) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func rateLimited() *Error {
	return &Error{Provider: "anthropic", Status: 429, Retryable: true,
		Message: "Anthropic returned 429 rate_limit_error: Number of requests has exceeded your rate limit"}
}

var okEvents = []Event{
	{Type: EventTextDelta, Text: "hi"},
	{Type: EventStop, StopReason: StopEndTurn},
}

func collect(t *testing.T, m Model, ctx context.Context) ([]Event, error) {
	t.Helper()
	var evs []Event
	for ev, err := range m.Stream(ctx, Request{}) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func TestRetryRepeatsRetryableFailureBeforeFirstEvent(t *testing.T) {
	inner := &scriptedModel{attempts: []attempt{
		{err: rateLimited()},
		{err: &Error{Provider: "anthropic", Status: 529, Retryable: true, Message: "Anthropic returned 529 overloaded_error: Overloaded"}},
		{events: okEvents},
	}}
	rec := &sleepRecorder{}
	m := WithRetry(inner, RetryPolicy{BaseDelay: time.Second, Sleep: rec.Sleep})
	evs, err := collect(t, m, t.Context())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(evs) != 2 || evs[0].Text != "hi" || evs[1].Type != EventStop {
		t.Fatalf("events = %+v, want the third attempt's", evs)
	}
	if inner.calls != 3 {
		t.Fatalf("attempts = %d, want 3", inner.calls)
	}
	// Equal jitter: the n-th wait lies in [base*2^(n-1)/2, base*2^(n-1)].
	if len(rec.delays) != 2 {
		t.Fatalf("waits = %v, want 2", rec.delays)
	}
	for i, d := range rec.delays {
		hi := time.Second << i
		if d < hi/2 || d > hi {
			t.Errorf("wait %d = %v, want within [%v, %v]", i+1, d, hi/2, hi)
		}
	}
}

func TestRetryHonoursRetryAfterHint(t *testing.T) {
	inner := &scriptedModel{attempts: []attempt{
		{err: RetryAfterHint(rateLimited(), 7*time.Second)},
		{events: okEvents},
	}}
	rec := &sleepRecorder{}
	m := WithRetry(inner, RetryPolicy{Sleep: rec.Sleep})
	if _, err := collect(t, m, t.Context()); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(rec.delays) != 1 || rec.delays[0] != 7*time.Second {
		t.Fatalf("waits = %v, want [7s]", rec.delays)
	}
}

func TestRetryExhaustedSaysOneSentence(t *testing.T) {
	inner := &scriptedModel{attempts: []attempt{
		{err: rateLimited()}, {err: rateLimited()}, {err: rateLimited()}, {err: rateLimited()}, {events: okEvents},
	}}
	rec := &sleepRecorder{}
	m := WithRetry(inner, RetryPolicy{Sleep: rec.Sleep})
	_, err := collect(t, m, t.Context())
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	const want = "Anthropic returned 429 rate_limit_error after 4 attempts: Number of requests has exceeded your rate limit; retry later"
	if e.Message != want || e.Status != 429 || e.Provider != "anthropic" {
		t.Fatalf("err = %+v, want message %q", e, want)
	}
	if inner.calls != 4 || len(rec.delays) != 3 {
		t.Fatalf("attempts = %d, waits = %d; want 4 and 3", inner.calls, len(rec.delays))
	}
}

func TestRetryStopsAtMaxElapsed(t *testing.T) {
	inner := &scriptedModel{attempts: []attempt{
		{err: RetryAfterHint(rateLimited(), time.Minute)}, {events: okEvents},
	}}
	rec := &sleepRecorder{}
	m := WithRetry(inner, RetryPolicy{MaxElapsed: 30 * time.Second, Sleep: rec.Sleep})
	_, err := collect(t, m, t.Context())
	var e *Error
	if !errors.As(err, &e) || e.Message != "Anthropic returned 429 rate_limit_error after 1 attempt: Number of requests has exceeded your rate limit; retry later" {
		t.Fatalf("err = %v, want exhaustion after the first attempt", err)
	}
	if len(rec.delays) != 0 {
		t.Fatalf("waited %v, want no wait past MaxElapsed", rec.delays)
	}
}

func TestRetryKeepsFailureAfterEventsWereYielded(t *testing.T) {
	midStream := &Error{Provider: "anthropic", Retryable: true, Message: "Anthropic stream failed with overloaded_error: Overloaded"}
	inner := &scriptedModel{attempts: []attempt{
		{events: []Event{{Type: EventTextDelta, Text: "par"}}, err: midStream},
		{events: okEvents},
	}}
	m := WithRetry(inner, RetryPolicy{Sleep: (&sleepRecorder{}).Sleep})
	evs, err := collect(t, m, t.Context())
	if err != midStream {
		t.Fatalf("err = %v, want the mid-stream failure as is", err)
	}
	if len(evs) != 1 || evs[0].Text != "par" || inner.calls != 1 {
		t.Fatalf("events = %+v after %d attempts, want the partial text from one attempt", evs, inner.calls)
	}
}

func TestRetryDoesNotRepeatPermanentFailure(t *testing.T) {
	bad := &Error{Provider: "anthropic", Status: 400, Message: "Anthropic returned 400 invalid_request_error: bad"}
	plain := errors.New("boom")
	for _, failure := range []error{bad, plain} {
		inner := &scriptedModel{attempts: []attempt{{err: failure}, {events: okEvents}}}
		m := WithRetry(inner, RetryPolicy{Sleep: (&sleepRecorder{}).Sleep})
		if _, err := collect(t, m, t.Context()); err != failure || inner.calls != 1 {
			t.Errorf("err = %v after %d attempts, want %v after 1", err, inner.calls, failure)
		}
	}
}

func TestRetryCancelInterruptsBackoffAtOnce(t *testing.T) {
	inner := &scriptedModel{attempts: []attempt{{err: RetryAfterHint(rateLimited(), time.Hour)}, {events: okEvents}}}
	m := WithRetry(inner, RetryPolicy{MaxElapsed: 2 * time.Hour}) // real sleep
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := collect(t, m, ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancel took %v to end the backoff", d)
	}
}

func TestRetryStopsWhenCallerStopsIterating(t *testing.T) {
	inner := &scriptedModel{attempts: []attempt{{events: okEvents}}}
	m := WithRetry(inner, RetryPolicy{})
	for range m.Stream(t.Context(), Request{}) {
		break
	}
	if inner.calls != 1 {
		t.Fatalf("attempts = %d, want 1", inner.calls)
	}
}

// The hint is cut at the "; " that begins it, not at one inside the cause's
// parentheses (an upstream message quoted by OpenRouter).
func TestRetryExhaustedKeepsASemicolonInsideTheCause(t *testing.T) {
	e := exhausted(&Error{Provider: "openrouter", Status: 429,
		Message: "OpenRouter returned 429 too many requests: Provider returned error (Google: x is temporarily rate-limited upstream; please retry shortly); wait and retry, or check your plan's limits."}, 1)
	const want = "OpenRouter returned 429 too many requests after 1 attempt: Provider returned error (Google: x is temporarily rate-limited upstream; please retry shortly); retry later"
	if e.Message != want {
		t.Fatalf("message %q\nwant    %q", e.Message, want)
	}
}
