package gemini

import (
	"encoding/json"
	"testing"
	"time"
)

func TestThinkingLevelOnlyForGemini3(t *testing.T) {
	for _, c := range []struct {
		model  string
		budget int
		want   string
	}{
		{"gemini-2.5-pro", 16384, ""},
		{"gemini-2.5-flash", 0, ""},
		{"gemini-3-pro-preview", 0, ""},
		{"gemini-3-pro-preview", 2048, "low"},
		{"gemini-3-pro-preview", 8192, "high"},
		{"gemini-3-flash-preview", 0, "minimal"},
		{"gemini-3-flash-preview", 8192, "medium"},
		{"gemini-3.5-flash", 32000, "high"},
		{"models/gemini-3-pro-preview", 2048, "low"},
	} {
		if got := thinkingLevel(c.model, c.budget); got != c.want {
			t.Errorf("thinkingLevel(%q, %d) = %q, want %q", c.model, c.budget, got, c.want)
		}
	}
}

func TestRetryDelayReadsRetryInfo(t *testing.T) {
	var body struct{ Error apiError }
	raw := `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34.4s"}]}}`
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		t.Fatal(err)
	}
	if got := body.Error.retryDelay(); got != 34400*time.Millisecond {
		t.Errorf("retryDelay = %v, want 34.4s", got)
	}
	if got := (&apiError{}).retryDelay(); got != 0 {
		t.Errorf("no RetryInfo: %v", got)
	}
}
