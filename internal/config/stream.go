package config

import (
	"strconv"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
)

// StreamIdleTimeout is how long a model stream may send nothing before the
// attempt is ended as stalled: $CORVID_STREAM_IDLE_TIMEOUT as a Go duration
// ("90s", "2m"). It is 0, meaning each provider's default, when the
// variable is unset, not a positive duration, or unreadable.
func StreamIdleTimeout(env Env) time.Duration {
	return positiveDuration(env.Getenv("CORVID_STREAM_IDLE_TIMEOUT"))
}

// RetryPolicy is how failed model requests are retried:
// $CORVID_RETRY_MAX_ATTEMPTS (attempts in all, first one included) and
// $CORVID_RETRY_BASE_DELAY (a Go duration: the first backoff, doubled each
// time). A variable that is unset or unreadable leaves its field zero, which
// llm.WithRetry reads as its default.
func RetryPolicy(env Env) llm.RetryPolicy {
	var p llm.RetryPolicy
	if n, err := strconv.Atoi(strings.TrimSpace(env.Getenv("CORVID_RETRY_MAX_ATTEMPTS"))); err == nil && n > 0 {
		p.MaxAttempts = n
	}
	p.BaseDelay = positiveDuration(env.Getenv("CORVID_RETRY_BASE_DELAY"))
	return p
}

func positiveDuration(s string) time.Duration {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0
	}
	return d
}
