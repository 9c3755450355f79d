package config

import (
	"testing"
	"time"
)

func TestStreamIdleTimeoutReadsAGoDurationElseProviderDefault(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"":        0,
		"2s":      2 * time.Second,
		" 1m30s ": 90 * time.Second,
		"250ms":   250 * time.Millisecond,
		"30":      0, // not a Go duration
		"-5s":     0,
		"0s":      0,
		"soon":    0,
	} {
		if got := StreamIdleTimeout(MapEnv{"CORVID_STREAM_IDLE_TIMEOUT": in}); got != want {
			t.Errorf("CORVID_STREAM_IDLE_TIMEOUT=%q: %v, want %v", in, got, want)
		}
	}
}

func TestRetrySettingsFromEnvironment(t *testing.T) {
	p := RetrySettings(MapEnv{"CORVID_RETRY_MAX_ATTEMPTS": "2", "CORVID_RETRY_BASE_DELAY": "50ms"})
	if p.MaxAttempts != 2 || p.BaseDelay != 50*time.Millisecond {
		t.Errorf("policy %+v, want 2 attempts, 50ms", p)
	}
	p = RetrySettings(MapEnv{"CORVID_RETRY_MAX_ATTEMPTS": "none", "CORVID_RETRY_BASE_DELAY": "-1s"})
	if p.MaxAttempts != 0 || p.BaseDelay != 0 {
		t.Errorf("unreadable values: policy %+v, want zero fields (llm's defaults)", p)
	}
	if p := RetrySettings(MapEnv{}); p.MaxAttempts != 0 || p.BaseDelay != 0 {
		t.Errorf("unset: policy %+v, want zero fields", p)
	}
}
