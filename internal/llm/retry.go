package llm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
	"time"
)

// RetryPolicy bounds how WithRetry repeats a failed attempt. The zero value
// is usable: every zero field takes the default named beside it.
type RetryPolicy struct {
	MaxAttempts int           // attempts in all, first one included (default 4)
	BaseDelay   time.Duration // backoff before the second attempt (default 1 s), doubled each time
	MaxDelay    time.Duration // ceiling of one backoff (default 30 s)
	MaxElapsed  time.Duration // no wait may end later than this after the first attempt began (default 2 min)

	// Sleep waits d or until ctx is done, returning ctx.Err() in that case.
	// Nil means a real timer; tests inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the clock used for MaxElapsed. Nil means time.Now.
	Now func() time.Time
	// OnRetry, if set, is told of each retry before its wait: the attempt
	// that failed (1-based), the wait, and the failure.
	OnRetry func(attempt int, delay time.Duration, err error)
}

// RetryAfterError is implemented by errors that carry the server's hint of
// how long to wait before trying again (an HTTP retry-after header).
type RetryAfterError interface {
	error
	RetryAfter() time.Duration
}

// RetryAfterHint returns e annotated with the server's retry-after hint d.
// errors.As still finds e in the result.
func RetryAfterHint(e *Error, d time.Duration) error {
	if d <= 0 {
		return e
	}
	return &retryAfterError{err: e, after: d}
}

type retryAfterError struct {
	err   *Error
	after time.Duration
}

func (e *retryAfterError) Error() string             { return e.err.Error() }
func (e *retryAfterError) Unwrap() error             { return e.err }
func (e *retryAfterError) RetryAfter() time.Duration { return e.after }

// Retry describes one retry of a request, before its wait.
type Retry struct {
	Attempt     int // the attempt that failed (1-based)
	MaxAttempts int
	Delay       time.Duration
	Err         error
}

type retryObserverKey struct{}

// WithRetryObserver returns ctx carrying observe, which WithRetry calls
// before each retry of a request made with it. RetryPolicy.OnRetry is the
// model's, shared by every caller; this one is the caller's own (a
// session tells its user).
func WithRetryObserver(ctx context.Context, observe func(Retry)) context.Context {
	return context.WithValue(ctx, retryObserverKey{}, observe)
}

// WithRetry wraps m so that an attempt failing with a retryable *Error
// before it yielded any event is tried again, after an exponential backoff
// with jitter or the server's retry-after hint when it gave one. Once an
// event has reached the caller, a failure is passed on as it is: what was
// streamed stays streamed, and repeating it would duplicate output.
//
// When the attempts or the time run out, the error is an *Error whose
// Message summarises the last failure in one sentence, e.g.
// "Anthropic returned 429 rate_limit_error after 4 attempts: Number of
// requests has exceeded your rate limit; retry later".
// Cancelling ctx ends a backoff wait at once with ctx.Err().
func WithRetry(m Model, p RetryPolicy) Model {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.MaxElapsed <= 0 {
		p.MaxElapsed = 2 * time.Minute
	}
	if p.Sleep == nil {
		p.Sleep = sleepContext
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return &retryModel{inner: m, policy: p}
}

type retryModel struct {
	inner  Model
	policy RetryPolicy
}

func (r *retryModel) Info() ModelInfo { return r.inner.Info() }

func (r *retryModel) Stream(ctx context.Context, req Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		p := r.policy
		start := p.Now()
		for attempt := 1; ; attempt++ {
			yielded := false
			var failure error
			for ev, err := range r.inner.Stream(ctx, req) {
				if err != nil {
					failure = err
					break
				}
				yielded = true
				if !yield(ev, nil) {
					return
				}
			}
			if failure == nil {
				return
			}
			var llmErr *Error
			if yielded || ctx.Err() != nil || !errors.As(failure, &llmErr) || !llmErr.Retryable {
				yield(Event{}, failure)
				return
			}
			delay := backoff(p, attempt)
			if hint, ok := errors.AsType[RetryAfterError](failure); ok && hint.RetryAfter() > 0 {
				delay = hint.RetryAfter()
			}
			if attempt >= p.MaxAttempts || p.Now().Add(delay).Sub(start) > p.MaxElapsed {
				yield(Event{}, exhausted(llmErr, attempt))
				return
			}
			if p.OnRetry != nil {
				p.OnRetry(attempt, delay, failure)
			}
			if observe, ok := ctx.Value(retryObserverKey{}).(func(Retry)); ok {
				observe(Retry{Attempt: attempt, MaxAttempts: p.MaxAttempts, Delay: delay, Err: failure})
			}
			if err := p.Sleep(ctx, delay); err != nil {
				yield(Event{}, err)
				return
			}
		}
	}
}

// backoff is the wait after the given failed attempt (1-based): BaseDelay
// doubled per attempt, capped at MaxDelay, then "equal jitter" so that many
// clients hit by one outage do not come back in lockstep.
func backoff(p RetryPolicy, attempt int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	half := d / 2
	return half + rand.N(half+1)
}

// exhausted turns the last failure into the one sentence the user sees.
// Provider messages follow the convention "summary: cause; hint"; the
// summary and the cause are kept (the cause says why: the upstream error,
// connection refused, …), and the per-attempt hint gives way to "retry
// later".
func exhausted(last *Error, attempts int) *Error {
	summary, cause, _ := strings.Cut(last.Message, ": ")
	summary = strings.TrimRight(summary, ". ")
	if summary == "" {
		summary = fmt.Sprintf("%s request failed", last.Provider)
	}
	cause = cutHint(cause)
	cause = strings.TrimRight(strings.TrimSpace(cause), ". ")
	noun := "attempts"
	if attempts == 1 {
		noun = "attempt"
	}
	msg := fmt.Sprintf("%s after %d %s", summary, attempts, noun)
	if cause != "" {
		msg += ": " + cause
	}
	return &Error{
		Provider:  last.Provider,
		Status:    last.Status,
		Retryable: true,
		Message:   msg + "; retry later",
	}
}

// cutHint drops the hint from "cause; hint": it begins at the first "; "
// outside brackets, since a cause may quote an upstream message with its
// own "; " inside parentheses.
func cutHint(cause string) string {
	depth := 0
	for i, r := range cause {
		switch r {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth = max(0, depth-1)
		case ';':
			if depth == 0 && strings.HasPrefix(cause[i:], "; ") {
				return cause[:i]
			}
		}
	}
	return cause
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
