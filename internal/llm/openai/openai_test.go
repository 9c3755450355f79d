package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/openai"
	"github.com/corvid-agent/corvid/internal/testkit/fakeopenai"
)

// open builds a model the way corvid does: provider table, credential and
// base URL from config, then llm.Open.
func open(t *testing.T, env config.MapEnv, provider, model string) llm.Model {
	t.Helper()
	p, ok := config.LookupProvider(provider)
	if !ok {
		t.Fatalf("no provider %s", provider)
	}
	key, _ := config.Credential(env, p)
	m, err := llm.Open(llm.ProviderConfig{Provider: provider, Model: model, APIKey: key, BaseURL: config.BaseURL(env, p)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type result struct {
	events []llm.Event
	err    error
}

func (r result) text(typ llm.EventType) string {
	var b strings.Builder
	for _, e := range r.events {
		if e.Type == typ {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func (r result) count(typ llm.EventType) int {
	n := 0
	for _, e := range r.events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func (r result) find(typ llm.EventType) llm.Event {
	for _, e := range r.events {
		if e.Type == typ {
			return e
		}
	}
	return llm.Event{}
}

func run(ctx context.Context, m llm.Model, req llm.Request) result {
	var r result
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			r.err = err
			break
		}
		r.events = append(r.events, ev)
	}
	return r
}

func noKeyring(t *testing.T) config.MapEnv {
	t.Helper()
	return config.MapEnv{"HOME": t.TempDir(), "CORVID_KEYRING": "off"}
}

var readTool = llm.ToolSpec{Name: "read", Description: "Read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}

func TestChatStreamsReasoningTextToolCallsAndUsage(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Enqueue(fakeopenai.Response{
		Blocks: []fakeopenai.Block{
			fakeopenai.ReasoningIn("reasoning", "Let me look at the file first."),
			fakeopenai.Text("I will read a.go now."),
			fakeopenai.ToolCall("call_1", "read", `{"path":"internal/a.go"}`),
			fakeopenai.ToolCall("call_2", "read", `{"path":"b.go"}`),
		},
		Usage: fakeopenai.Usage{InputTokens: 100, OutputTokens: 20, CachedTokens: 30},
	})
	env := noKeyring(t)
	env["OPENROUTER_API_KEY"] = "or-key"
	env["OPENROUTER_BASE_URL"] = fake.BaseURL()
	m := open(t, env, "openrouter", "anthropic/claude-sonnet-4.6")

	r := run(t.Context(), m, llm.Request{System: "be brief", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("read a.go")}}}, Tools: []llm.ToolSpec{readTool}, MaxTokens: 1000})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.text(llm.EventThinkingDelta); got != "Let me look at the file first." {
		t.Errorf("thinking = %q", got)
	}
	if got := r.text(llm.EventTextDelta); got != "I will read a.go now." {
		t.Errorf("text = %q", got)
	}
	if n := r.count(llm.EventToolUseStart); n != 2 {
		t.Fatalf("%d tool starts", n)
	}
	var ends []llm.Event
	deltas := map[int]string{}
	for _, e := range r.events {
		switch e.Type {
		case llm.EventToolUseDelta:
			deltas[e.Index] += e.Text
		case llm.EventToolUseEnd:
			ends = append(ends, e)
		}
	}
	if len(ends) != 2 || ends[0].ToolUseID != "call_1" || ends[0].ToolName != "read" || string(ends[0].Input) != `{"path":"internal/a.go"}` || ends[1].ToolUseID != "call_2" {
		t.Fatalf("tool ends = %+v", ends)
	}
	if deltas[ends[0].Index] != `{"path":"internal/a.go"}` {
		t.Errorf("streamed arguments = %q", deltas[ends[0].Index])
	}
	if r.count(llm.EventToolUseDelta) < 4 {
		t.Errorf("arguments arrived in %d deltas; the fake sends pieces", r.count(llm.EventToolUseDelta))
	}
	// Distinct blocks have distinct indexes.
	idx := map[int]llm.EventType{}
	for _, e := range r.events {
		if e.Type == llm.EventUsage || e.Type == llm.EventStop {
			continue
		}
		kind := e.Type
		if kind == llm.EventToolUseDelta || kind == llm.EventToolUseEnd {
			kind = llm.EventToolUseStart
		}
		if k, ok := idx[e.Index]; ok && k != kind {
			t.Fatalf("index %d used by %v and %v", e.Index, k, kind)
		}
		idx[e.Index] = kind
	}
	if u := r.find(llm.EventUsage).Usage; u != (llm.Usage{InputTokens: 70, OutputTokens: 20, CacheReadTokens: 30}) {
		t.Errorf("usage = %+v", u)
	}
	last := r.events[len(r.events)-1]
	if last.Type != llm.EventStop || last.StopReason != llm.StopToolUse {
		t.Errorf("last event = %+v", last)
	}

	req := fake.Requests()[0]
	if req.Path != "/v1/chat/completions" || req.Body["model"] != "anthropic/claude-sonnet-4.6" || req.Body["stream"] != true {
		t.Errorf("request = %s %s", req.Path, req.Raw)
	}
	if so, _ := req.Body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options = %v", req.Body["stream_options"])
	}
	if req.Body["max_tokens"] != float64(1000) {
		t.Errorf("max_tokens = %v", req.Body["max_tokens"])
	}
	msgs, _ := req.Body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" {
		t.Errorf("messages = %v", msgs)
	}
}

func TestChatReasoningContentFieldAndLengthStop(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Enqueue(fakeopenai.Response{
		Blocks:       []fakeopenai.Block{fakeopenai.Reasoning("思考中…"), fakeopenai.Text("答え")},
		FinishReason: "length",
	})
	env := noKeyring(t)
	env["DEEPSEEK_API_KEY"] = "ds"
	env["DEEPSEEK_BASE_URL"] = fake.BaseURL()
	r := run(t.Context(), open(t, env, "deepseek", "deepseek-reasoner"), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("hi")}}}})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.text(llm.EventThinkingDelta) != "思考中…" || r.text(llm.EventTextDelta) != "答え" {
		t.Errorf("thinking %q text %q", r.text(llm.EventThinkingDelta), r.text(llm.EventTextDelta))
	}
	if s := r.events[len(r.events)-1]; s.StopReason != llm.StopMaxTokens {
		t.Errorf("stop = %+v", s)
	}
}

func TestCompatibleProviderNeverSendsAnotherProvidersKey(t *testing.T) {
	// The process environment points the SDK elsewhere: it must be ignored.
	trap := fakeopenai.New(t)
	t.Setenv("OPENAI_API_KEY", "sk-process-env-secret")
	t.Setenv("OPENAI_BASE_URL", trap.BaseURL())
	t.Setenv("OPENAI_ORG_ID", "org-process")

	fake := fakeopenai.New(t)
	env := noKeyring(t)
	env["OPENAI_API_KEY"] = "sk-openai-secret"
	env["ANTHROPIC_API_KEY"] = "sk-ant-secret"
	env["OPENROUTER_API_KEY"] = "sk-or-key"
	env["OPENROUTER_BASE_URL"] = fake.BaseURL()
	env["OLLAMA_BASE_URL"] = fake.BaseURL()

	for _, tc := range []struct{ provider, wantKey string }{{"openrouter", "sk-or-key"}, {"ollama", ""}} {
		fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("ok")}})
		r := run(t.Context(), open(t, env, tc.provider, "m"), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("hi")}}}})
		if r.err != nil {
			t.Fatal(r.err)
		}
		reqs := fake.Requests()
		req := reqs[len(reqs)-1]
		if got := req.APIKey(); got != tc.wantKey {
			t.Errorf("%s: bearer = %q, want %q", tc.provider, got, tc.wantKey)
		}
		if tc.wantKey == "" && req.Header.Get("Authorization") != "" {
			t.Errorf("%s: keyless provider sent Authorization %q", tc.provider, req.Header.Get("Authorization"))
		}
		for name, vals := range req.Header {
			for _, v := range vals {
				for _, secret := range []string{"sk-openai-secret", "sk-ant-secret", "sk-process-env-secret", "org-process"} {
					if strings.Contains(v, secret) {
						t.Errorf("%s: header %s carries %q", tc.provider, name, secret)
					}
				}
			}
		}
	}
	if n := len(trap.Requests()); n != 0 {
		t.Errorf("OPENAI_BASE_URL from the process environment received %d requests", n)
	}
}

func userHi() llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("hi")}}}}
}

func TestChatErrorsBecomeActionableLLMErrors(t *testing.T) {
	const key = "sk-or-very-secret-key"
	var logs bytes.Buffer
	prevSlog, prevLog := slog.Default(), log.Writer()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	log.SetOutput(&logs)
	t.Cleanup(func() { slog.SetDefault(prevSlog); log.SetOutput(prevLog) })

	fake := fakeopenai.New(t)
	env := noKeyring(t)
	env["OPENROUTER_API_KEY"] = key
	env["OPENROUTER_BASE_URL"] = fake.BaseURL()
	m := open(t, env, "openrouter", "x/y")

	cases := []struct {
		name      string
		fault     fakeopenai.Fault
		status    int
		retryable bool
		want      string
		after     time.Duration
	}{
		{"rate limit", fakeopenai.RateLimit(2 * time.Second), 429, true, "OpenRouter returned 429 rate_limit_exceeded: Rate limit reached", 2 * time.Second},
		{"server error", fakeopenai.ServerError(), 500, true, "OpenRouter returned 500 server_error", 0},
		{"overloaded", fakeopenai.Overloaded(), 503, true, "OpenRouter returned 503 overloaded", 0},
		{"bad key", fakeopenai.HTTPError(401, "invalid_api_key", "Incorrect API key provided: "+key), 401, false, "check OPENROUTER_API_KEY or run `corvid auth login openrouter`", 0},
		{"bad model", fakeopenai.HTTPError(404, "model_not_found", "no such model"), 404, false, `check the model id "x/y"`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake.Enqueue(fakeopenai.Response{Fault: tc.fault})
			r := run(t.Context(), m, userHi())
			var le *llm.Error
			if !errors.As(r.err, &le) {
				t.Fatalf("err = %T %v", r.err, r.err)
			}
			if le.Provider != "openrouter" || le.Status != tc.status || le.Retryable != tc.retryable || !strings.Contains(le.Message, tc.want) {
				t.Errorf("error = %+v", le)
			}
			if strings.Contains(le.Message, key) || strings.Contains(r.err.Error(), key) {
				t.Errorf("message leaks the key: %s", le.Message)
			}
			var ra llm.RetryAfterError
			if tc.after > 0 && (!errors.As(r.err, &ra) || ra.RetryAfter() != tc.after) {
				t.Errorf("retry-after hint missing: %v", r.err)
			}
		})
	}
	if strings.Contains(logs.String(), key) {
		t.Errorf("logs carry the key:\n%s", logs.String())
	}
}

func TestChatMidStreamFailures(t *testing.T) {
	fake := fakeopenai.New(t)
	env := noKeyring(t)
	env["GROQ_API_KEY"] = "g"
	env["GROQ_BASE_URL"] = fake.BaseURL()
	m := open(t, env, "groq", "m")
	text := fakeopenai.Text("a fairly long answer that takes many chunks")
	cases := []struct {
		name  string
		fault fakeopenai.Fault
		want  string
	}{
		{"error chunk", fakeopenai.StreamError(3, "server_error", "upstream exploded"), "Groq reported an error server_error: upstream exploded"},
		{"cut", fakeopenai.Cut(3), "closed the stream before the response was complete"},
		{"malformed", fakeopenai.Malformed(3), "malformed stream event"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{text}, Fault: tc.fault})
			r := run(t.Context(), m, userHi())
			var le *llm.Error
			if !errors.As(r.err, &le) || !le.Retryable || !strings.Contains(le.Message, tc.want) {
				t.Fatalf("err = %v (%+v)", r.err, le)
			}
			if r.count(llm.EventTextDelta) == 0 {
				t.Error("no text before the failure")
			}
			if r.count(llm.EventStop) != 0 {
				t.Error("stop event after a failure")
			}
		})
	}
}

func TestCancelEndsStalledStreamPromptly(t *testing.T) {
	// The stall comes after the first text delta: event 2 on chat (after
	// the role chunk), event 5 on responses (after created, in_progress,
	// output_item.added, content_part.added).
	for provider, after := range map[string]int{"vllm": 2, "openai": 5} {
		t.Run(provider, func(t *testing.T) {
			fake := fakeopenai.New(t)
			fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("hello there")}, Fault: fakeopenai.Stall(after, 10*time.Second)})
			env := noKeyring(t)
			env["OPENAI_API_KEY"] = "k"
			env["OPENAI_BASE_URL"] = fake.BaseURL()
			env["VLLM_BASE_URL"] = fake.BaseURL()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var got error
			var start time.Time
			for ev, err := range open(t, env, provider, "m").Stream(ctx, userHi()) {
				if err != nil {
					got = err
					break
				}
				if ev.Type == llm.EventTextDelta && start.IsZero() {
					start = time.Now()
					time.AfterFunc(50*time.Millisecond, cancel)
				}
			}
			if !errors.Is(got, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", got)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("cancel took %v", d)
			}
		})
	}
}

func TestLocalServerNotRunning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := noKeyring(t)
	env["OLLAMA_BASE_URL"] = "http://" + addr + "/v1"
	r := run(t.Context(), open(t, env, "ollama", "qwen3"), userHi())
	var le *llm.Error
	if !errors.As(r.err, &le) || !strings.Contains(le.Message, "Ollama is not reachable") {
		t.Fatalf("err = %v", r.err)
	}
}

func TestMissingKeyIsReportedBeforeAnyRequest(t *testing.T) {
	_, err := llm.Open(llm.ProviderConfig{Provider: "groq", Model: "m"})
	var le *llm.Error
	if !errors.As(err, &le) || !strings.Contains(le.Message, "GROQ_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}

func TestChatSendsHistoryInAPIOrder(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("done")}})
	env := noKeyring(t)
	env["LMSTUDIO_BASE_URL"] = fake.BaseURL()
	req := llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("read it"), {Type: llm.PartImage, MimeType: "image/png", Data: []byte{1, 2}}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Type: llm.PartThinking, Text: "hmm"},
			llm.Text("Reading."),
			{Type: llm.PartToolUse, ToolUseID: "call_9", ToolName: "read", Input: json.RawMessage(`{"path":"a"}`)},
		}},
		{Role: llm.RoleUser, Parts: []llm.Part{
			{Type: llm.PartToolResult, ToolUseID: "call_9", Text: "contents", IsError: false},
			llm.Text("and now?"),
		}},
	}}
	if r := run(t.Context(), open(t, env, "lmstudio", "qwen"), req); r.err != nil {
		t.Fatal(r.err)
	}
	var body struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(fake.Requests()[0].Raw, &body); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,tool,user" {
		t.Fatalf("roles = %v", roles)
	}
	a := body.Messages[1]
	if string(a.Content) != `"Reading."` || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "call_9" || a.ToolCalls[0].Function.Arguments != `{"path":"a"}` {
		t.Errorf("assistant = %+v", a)
	}
	if body.Messages[2].ToolCallID != "call_9" || string(body.Messages[2].Content) != `"contents"` {
		t.Errorf("tool = %+v", body.Messages[2])
	}
	if !strings.Contains(string(body.Messages[0].Content), "data:image/png;base64,AQI=") {
		t.Errorf("user content = %s", body.Messages[0].Content)
	}
}

func TestCustomProviderFromConfig(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("custom ok")}})
	file := &config.File{Custom: map[string]config.CustomProvider{
		"myproxy": {BaseURL: fake.BaseURL(), KeyVar: "MYPROXY_KEY", API: config.APIChat, Title: "My Proxy"},
	}}
	p, ok := file.Provider("myproxy")
	if !ok {
		t.Fatal("custom provider not found")
	}
	if err := openai.RegisterCustom(p); err != nil {
		t.Fatal(err)
	}
	env := noKeyring(t)
	env["MYPROXY_KEY"] = "proxy-key"
	env["OPENAI_API_KEY"] = "sk-openai-secret"
	key, _ := config.Credential(env, p)
	m, err := llm.Open(llm.ProviderConfig{Provider: "myproxy", Model: "m1", APIKey: key, BaseURL: config.BaseURL(env, p)})
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t.Context(), m, userHi()); r.err != nil || r.text(llm.EventTextDelta) != "custom ok" {
		t.Fatalf("%v %q", r.err, r.text(llm.EventTextDelta))
	}
	if got := fake.Requests()[0].APIKey(); got != "proxy-key" {
		t.Errorf("bearer = %q", got)
	}
	fake.Enqueue(fakeopenai.Response{Fault: fakeopenai.ServerError()})
	var le *llm.Error
	if r := run(t.Context(), m, userHi()); !errors.As(r.err, &le) || !strings.HasPrefix(le.Message, "My Proxy returned 500") {
		t.Errorf("err = %v", r.err)
	}
}

// TestChat200JSONErrorBodyIsReportedNotCut: a server (OpenRouter) that
// answers an upstream failure with status 200 and a JSON error body, where
// a stream was due, gets its error reported, with the body's code as the
// status; a 200 JSON body without an error is still a cut stream.
func TestChat200JSONErrorBodyIsReportedNotCut(t *testing.T) {
	bodies := make(chan string, 2)
	bodies <- `{"error":{"code":502,"message":"Provider returned error","metadata":{"provider_name":"Google","raw":"upstream down"}},"user_id":"u"}`
	bodies <- `{"id":"x","choices":[],"note":"no error here"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, <-bodies)
	}))
	t.Cleanup(srv.Close)
	env := noKeyring(t)
	env["OPENROUTER_API_KEY"] = "k"
	env["OPENROUTER_BASE_URL"] = srv.URL + "/v1"
	m := open(t, env, "openrouter", "x/y")

	r := run(t.Context(), m, userHi())
	var le *llm.Error
	if !errors.As(r.err, &le) || le.Status != 502 || !le.Retryable {
		t.Fatalf("err = %v (%+v), want a retryable 502", r.err, le)
	}
	for _, want := range []string{"Provider returned error", "Google: upstream down"} {
		if !strings.Contains(le.Message, want) {
			t.Errorf("message %q drops %q", le.Message, want)
		}
	}
	if strings.Contains(le.Message, "closed the stream") {
		t.Errorf("message %q calls it a cut stream", le.Message)
	}

	r = run(t.Context(), m, userHi())
	if !errors.As(r.err, &le) || !strings.Contains(le.Message, "closed the stream before the response was complete") {
		t.Fatalf("err = %v, want a cut stream", r.err)
	}
}
