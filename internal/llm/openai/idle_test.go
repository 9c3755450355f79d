package openai_test

import (
	"errors"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/testkit/fakeopenai"
)

// openIdle builds a model like open, with an idle timeout.
func openIdle(t *testing.T, env config.MapEnv, provider string, idle time.Duration) llm.Model {
	t.Helper()
	p, _ := config.LookupProvider(provider)
	key, _ := config.Credential(env, p)
	m, err := llm.Open(llm.ProviderConfig{Provider: provider, Model: "m", APIKey: key, BaseURL: config.BaseURL(env, p), IdleTimeout: idle})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStallEndsAttemptWithRetryableErrorAfterIdleTimeout(t *testing.T) {
	t.Parallel()
	// Stalls before the headers, and after the first text delta: event 2
	// on chat (after the role chunk), event 5 on responses.
	cases := []struct {
		name, provider string
		after          int
		want           string
	}{
		{"chat before headers", "openrouter", 0, "OpenRouter stream stalled: no data for 300ms"},
		{"chat mid-stream", "openrouter", 2, "OpenRouter stream stalled: no data for 300ms"},
		{"responses before headers", "openai", 0, "OpenAI stream stalled: no data for 300ms"},
		{"responses mid-stream", "openai", 5, "OpenAI stream stalled: no data for 300ms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := fakeopenai.New(t)
			fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("hello there")}, Fault: fakeopenai.Stall(tc.after, time.Hour)})
			env := noKeyring(t)
			env["OPENAI_API_KEY"], env["OPENAI_BASE_URL"] = "k", fake.BaseURL()
			env["OPENROUTER_API_KEY"], env["OPENROUTER_BASE_URL"] = "k", fake.BaseURL()
			const idle = 300 * time.Millisecond
			start := time.Now()
			r := run(t.Context(), openIdle(t, env, tc.provider, idle), userHi())
			elapsed := time.Since(start)
			var le *llm.Error
			if !errors.As(r.err, &le) || !le.Retryable || le.Message != tc.want {
				t.Fatalf("err = %v (%+v), want retryable %q", r.err, le, tc.want)
			}
			if elapsed < idle || elapsed > idle+3*time.Second {
				t.Fatalf("stall noticed after %v, want about %v", elapsed, idle)
			}
			if tc.after > 0 && r.count(llm.EventTextDelta) == 0 {
				t.Error("no text before the stall")
			}
		})
	}
}

func TestSlowStreamWithinIdleTimeoutIsNotAStall(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openrouter", "openai"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			fake := fakeopenai.New(t)
			// Each gap is under the idle timeout though the whole stream is not.
			fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("tick tock tick tock")}, EventDelay: 100 * time.Millisecond})
			env := noKeyring(t)
			env["OPENAI_API_KEY"], env["OPENAI_BASE_URL"] = "k", fake.BaseURL()
			env["OPENROUTER_API_KEY"], env["OPENROUTER_BASE_URL"] = "k", fake.BaseURL()
			r := run(t.Context(), openIdle(t, env, provider, 400*time.Millisecond), userHi())
			if r.err != nil || r.count(llm.EventStop) != 1 {
				t.Fatalf("err = %v, stops = %d", r.err, r.count(llm.EventStop))
			}
		})
	}
}

func TestSlowConsumerIsNotAStall(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("one two three")}})
	env := noKeyring(t)
	env["OPENROUTER_API_KEY"], env["OPENROUTER_BASE_URL"] = "k", fake.BaseURL()
	m := openIdle(t, env, "openrouter", 200*time.Millisecond)
	var err error
	for ev, e := range m.Stream(t.Context(), userHi()) {
		if e != nil {
			err = e
			break
		}
		if ev.Type == llm.EventTextDelta {
			time.Sleep(300 * time.Millisecond) // longer than the idle timeout
		}
	}
	if err != nil {
		t.Fatalf("a consumer slower than the idle timeout ended the stream: %v", err)
	}
}
