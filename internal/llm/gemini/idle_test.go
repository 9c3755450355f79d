package gemini_test

import (
	"errors"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/testkit/fakegemini"
)

func openIdle(t *testing.T, env config.MapEnv, idle time.Duration) llm.Model {
	t.Helper()
	p, _ := config.LookupProvider("gemini")
	key, _ := config.Credential(env, p)
	m, err := llm.Open(llm.ProviderConfig{Provider: "gemini", Model: "gemini-2.5-flash", APIKey: key, BaseURL: config.BaseURL(env, p), IdleTimeout: idle})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStallEndsAttemptWithRetryableErrorAfterIdleTimeout(t *testing.T) {
	t.Parallel()
	for name, after := range map[string]int{"before headers": 0, "mid-stream": 1} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake := fakegemini.New(t)
			fake.Enqueue(fakegemini.Response{Blocks: []fakegemini.Block{fakegemini.Text("hello world, then silence")}, Fault: fakegemini.Stall(after, time.Hour)})
			const idle = 300 * time.Millisecond
			start := time.Now()
			r := run(t.Context(), openIdle(t, env(t, fake), idle), hi())
			elapsed := time.Since(start)
			var le *llm.Error
			if !errors.As(r.err, &le) || !le.Retryable || le.Message != "Gemini stream stalled: no data for 300ms" {
				t.Fatalf("err = %v (%+v)", r.err, le)
			}
			if elapsed < idle || elapsed > idle+3*time.Second {
				t.Fatalf("stall noticed after %v, want about %v", elapsed, idle)
			}
			if after > 0 && len(r.all(llm.EventTextDelta)) == 0 {
				t.Error("no text before the stall")
			}
		})
	}
}

func TestSlowStreamOrConsumerWithinIdleTimeoutIsNotAStall(t *testing.T) {
	t.Parallel()
	fake := fakegemini.New(t)
	// Each gap is under the idle timeout though the whole stream is not,
	// and the consumer takes longer than the timeout over one event.
	fake.Enqueue(fakegemini.Response{Blocks: []fakegemini.Block{fakegemini.Text("tick tock tick tock")}, EventDelay: 100 * time.Millisecond})
	var err error
	stops := 0
	for ev, e := range openIdle(t, env(t, fake), 400*time.Millisecond).Stream(t.Context(), hi()) {
		if e != nil {
			err = e
			break
		}
		switch ev.Type {
		case llm.EventTextDelta:
			time.Sleep(500 * time.Millisecond)
		case llm.EventStop:
			stops++
		}
	}
	if err != nil || stops != 1 {
		t.Fatalf("err = %v, stops = %d", err, stops)
	}
}
