package gemini

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
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

// A signed part is a block of its own, announced by its signature, so
// that the signature goes back on that part and is never merged with the
// unsigned parts before it.
func TestSignedPartIsABlockOfItsOwn(t *testing.T) {
	var resp generateResponse
	raw := `{"candidates":[{"content":{"role":"model","parts":[` +
		`{"text":"a","thought":true},{"text":"b","thought":true,"thoughtSignature":"c2ln"},` +
		`{"text":"x"},{"text":"","thoughtSignature":"c2ln"},{"text":"y"}]}}]}`
	if err := json.Unmarshal([]byte(raw), &resp); err != nil {
		t.Fatal(err)
	}
	evs := (&streamState{}).chunk(&resp)
	type ev struct {
		typ  llm.EventType
		idx  int
		text string
	}
	var got []ev
	for _, e := range evs {
		got = append(got, ev{e.Type, e.Index, e.Text})
	}
	want := []ev{
		{llm.EventThinkingDelta, 0, "a"},
		{llm.EventSignature, 1, "c2ln"}, {llm.EventThinkingDelta, 1, "b"},
		{llm.EventTextDelta, 2, "x"},
		{llm.EventSignature, 3, "c2ln"}, {llm.EventTextDelta, 3, ""},
		{llm.EventTextDelta, 4, "y"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("events\n got %v\nwant %v", got, want)
	}
}
