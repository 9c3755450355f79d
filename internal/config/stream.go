package config

import (
	"strconv"
	"strings"
	"time"
)

// StreamIdleTimeout is how long a model stream may send nothing before the
// attempt is ended as stalled: $CORVID_STREAM_IDLE_TIMEOUT as a Go duration
// ("90s", "2m"). It is 0, meaning each provider's default, when the
// variable is unset, not a positive duration, or unreadable.
func StreamIdleTimeout(env Env) time.Duration {
	return positiveDuration(env.Getenv("CORVID_STREAM_IDLE_TIMEOUT"))
}

// Retry is how failed model requests are retried:
// $CORVID_RETRY_MAX_ATTEMPTS (attempts in all, first one included) and
// $CORVID_RETRY_BASE_DELAY (a Go duration: the first backoff, doubled each
// time). A variable that is unset or unreadable leaves its field zero,
// meaning the retry wrapper's default. (config sits at the bottom of the
// import graph, so it returns plain values; cmd builds llm.RetryPolicy.)
type Retry struct {
	MaxAttempts int
	BaseDelay   time.Duration
}

// RetrySettings reads Retry from env.
func RetrySettings(env Env) Retry {
	var r Retry
	if n, err := strconv.Atoi(strings.TrimSpace(env.Getenv("CORVID_RETRY_MAX_ATTEMPTS"))); err == nil && n > 0 {
		r.MaxAttempts = n
	}
	r.BaseDelay = positiveDuration(env.Getenv("CORVID_RETRY_BASE_DELAY"))
	return r
}

func positiveDuration(s string) time.Duration {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0
	}
	return d
}
