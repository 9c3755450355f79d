package gemini_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	_ "github.com/corvid-agent/corvid/internal/llm/gemini"
	"github.com/corvid-agent/corvid/internal/testkit/fakegemini"
)

func open(t *testing.T, env config.MapEnv, model string) llm.Model {
	t.Helper()
	p, _ := config.LookupProvider("gemini")
	key, _ := config.Credential(env, p)
	m, err := llm.Open(llm.ProviderConfig{Provider: "gemini", Model: model, APIKey: key, BaseURL: config.BaseURL(env, p)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func env(t *testing.T, fake *fakegemini.Server) config.MapEnv {
	return config.MapEnv{"HOME": t.TempDir(), "CORVID_KEYRING": "off", "GEMINI_API_KEY": "gm-key", "GEMINI_BASE_URL": fake.URL()}
}

type result struct {
	events []llm.Event
	err    error
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

func (r result) text(typ llm.EventType) string {
	var b strings.Builder
	for _, e := range r.events {
		if e.Type == typ {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func (r result) all(typ llm.EventType) []llm.Event {
	var out []llm.Event
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func hi() llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("hi")}}}}
}

func TestStreamsThoughtsTextFunctionCallsAndUsage(t *testing.T) {
	fake := fakegemini.New(t)
	call := fakegemini.FunctionCall("read", map[string]any{"path": "main.go"})
	call.Signature = []byte("sig-bytes")
	fake.Enqueue(fakegemini.Response{
		Blocks: []fakegemini.Block{
			fakegemini.Thought("Considering which file to open."),
			fakegemini.Text("Opening main.go."),
			call,
		},
		Usage: fakegemini.Usage{PromptTokens: 500, CandidatesTokens: 40, CachedTokens: 100, ThoughtsTokens: 60},
	})
	// The process environment must not matter.
	t.Setenv("GOOGLE_API_KEY", "process-google-key")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")

	m := open(t, env(t, fake), "gemini-2.5-pro")
	r := run(t.Context(), m, llm.Request{
		System:         "be terse",
		Messages:       []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("open main")}}},
		Tools:          []llm.ToolSpec{{Name: "read", Description: "Read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
		MaxTokens:      2048,
		ThinkingBudget: 1024,
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.text(llm.EventThinkingDelta); got != "Considering which file to open." {
		t.Errorf("thinking = %q", got)
	}
	if got := r.text(llm.EventTextDelta); got != "Opening main.go." {
		t.Errorf("text = %q", got)
	}
	starts, ends := r.all(llm.EventToolUseStart), r.all(llm.EventToolUseEnd)
	if len(starts) != 1 || len(ends) != 1 || ends[0].ToolName != "read" || string(ends[0].Input) != `{"path":"main.go"}` || ends[0].ToolUseID != starts[0].ToolUseID {
		t.Fatalf("tool events: %+v %+v", starts, ends)
	}
	sigs := r.all(llm.EventSignature)
	if len(sigs) != 1 || sigs[0].Index != ends[0].Index || sigs[0].Text != base64.StdEncoding.EncodeToString([]byte("sig-bytes")) {
		t.Errorf("signatures = %+v", sigs)
	}
	if u := r.all(llm.EventUsage); len(u) != 1 || u[0].Usage != (llm.Usage{InputTokens: 400, OutputTokens: 100, CacheReadTokens: 100}) {
		t.Errorf("usage = %+v", u)
	}
	if last := r.events[len(r.events)-1]; last.Type != llm.EventStop || last.StopReason != llm.StopToolUse {
		t.Errorf("last = %+v", last)
	}

	req := fake.Requests()[0]
	if req.Model() != "gemini-2.5-pro" || req.APIKey() != "gm-key" || !strings.Contains(req.Query, "alt=sse") {
		t.Errorf("request %s?%s key %q", req.Path, req.Query, req.APIKey())
	}
	for name, vals := range req.Header {
		if strings.Contains(strings.Join(vals, " "), "process-google-key") {
			t.Errorf("header %s carries the process key", name)
		}
	}
	gc, _ := req.Body["generationConfig"].(map[string]any)
	tc, _ := gc["thinkingConfig"].(map[string]any)
	if gc["maxOutputTokens"] != float64(2048) || tc["includeThoughts"] != true || tc["thinkingBudget"] != float64(1024) {
		t.Errorf("generationConfig = %v", req.Body["generationConfig"])
	}
	if _, ok := req.Body["systemInstruction"]; !ok {
		t.Errorf("no systemInstruction: %s", req.Raw)
	}

	// The call, its signature and the result go back in the next request.
	fake.Enqueue(fakegemini.Response{Blocks: []fakegemini.Block{fakegemini.Text("It is a Go file.")}})
	history := []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("open main")}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			llm.Text("Opening main.go."),
			{Type: llm.PartToolUse, ToolUseID: ends[0].ToolUseID, ToolName: "read", Input: ends[0].Input, Signature: sigs[0].Text},
		}},
		{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartToolResult, ToolUseID: ends[0].ToolUseID, Text: "package main"}}},
	}
	if r2 := run(t.Context(), m, llm.Request{Messages: history}); r2.err != nil || r2.text(llm.EventTextDelta) != "It is a Go file." {
		t.Fatalf("second turn: %v", r2.err)
	}
	var body struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             string `json:"text"`
				ThoughtSignature string `json:"thoughtSignature"`
				FunctionCall     *struct {
					ID   string         `json:"id"`
					Name string         `json:"name"`
					Args map[string]any `json:"args"`
				} `json:"functionCall"`
				FunctionResponse *struct {
					ID       string         `json:"id"`
					Name     string         `json:"name"`
					Response map[string]any `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(fake.Requests()[1].Raw, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Contents) != 3 || body.Contents[1].Role != "model" || body.Contents[2].Role != "user" {
		t.Fatalf("contents = %s", fake.Requests()[1].Raw)
	}
	fc := body.Contents[1].Parts[1]
	if fc.FunctionCall == nil || fc.FunctionCall.Name != "read" || fc.FunctionCall.ID != "" || fc.ThoughtSignature != sigs[0].Text {
		t.Errorf("function call part = %+v", fc)
	}
	fr := body.Contents[2].Parts[0].FunctionResponse
	if fr == nil || fr.Name != "read" || fr.Response["output"] != "package main" {
		t.Errorf("function response = %+v", fr)
	}
}

func TestErrorsAndBrokenStreams(t *testing.T) {
	fake := fakegemini.New(t)
	m := open(t, env(t, fake), "gemini-2.5-flash")
	long := fakegemini.Text("an answer long enough for several chunks")
	cases := []struct {
		name      string
		resp      fakegemini.Response
		status    int
		retryable bool
		want      string
		after     time.Duration
	}{
		{"rate limit", fakegemini.Response{Fault: fakegemini.RateLimit(3 * time.Second)}, 429, true, "Gemini returned 429 RESOURCE_EXHAUSTED", 3 * time.Second},
		{"server error", fakegemini.Response{Fault: fakegemini.ServerError()}, 500, true, "Gemini returned 500 INTERNAL", 0},
		{"overloaded", fakegemini.Response{Fault: fakegemini.Overloaded()}, 503, true, "The model is overloaded", 0},
		{"bad key", fakegemini.Response{Fault: fakegemini.HTTPError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")}, 400, false, "run `corvid auth login gemini`", 0},
		{"mid-stream error", fakegemini.Response{Blocks: []fakegemini.Block{long}, Fault: fakegemini.StreamError(2, 500, "INTERNAL", "backend died")}, 500, true, "backend died", 0},
		{"cut", fakegemini.Response{Blocks: []fakegemini.Block{long}, Fault: fakegemini.Cut(2)}, 0, true, "closed the stream", 0},
		{"no finish", fakegemini.Response{Blocks: []fakegemini.Block{long}, FinishReason: "-"}, 0, true, "closed the stream", 0},
		{"malformed", fakegemini.Response{Blocks: []fakegemini.Block{long}, Fault: fakegemini.Malformed(2)}, 0, true, "malformed stream event", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake.Enqueue(tc.resp)
			r := run(t.Context(), m, hi())
			var le *llm.Error
			if !errors.As(r.err, &le) {
				t.Fatalf("err = %T %v", r.err, r.err)
			}
			if le.Provider != "gemini" || le.Status != tc.status || le.Retryable != tc.retryable || !strings.Contains(le.Message, tc.want) {
				t.Errorf("error = %+v", le)
			}
			if strings.Contains(r.err.Error(), "gm-key") {
				t.Error("error carries the key")
			}
			var ra llm.RetryAfterError
			if tc.after > 0 && (!errors.As(r.err, &ra) || ra.RetryAfter() != tc.after) {
				t.Errorf("retry-after hint missing: %v", r.err)
			}
			if len(r.all(llm.EventStop)) != 0 {
				t.Error("stop after a failure")
			}
		})
	}
}

func TestStopReasons(t *testing.T) {
	fake := fakegemini.New(t)
	m := open(t, env(t, fake), "gemini-2.5-flash")
	for finish, want := range map[string]llm.StopReason{"STOP": llm.StopEndTurn, "MAX_TOKENS": llm.StopMaxTokens, "SAFETY": llm.StopRefusal} {
		fake.Enqueue(fakegemini.Response{Blocks: []fakegemini.Block{fakegemini.Text("x")}, FinishReason: finish})
		r := run(t.Context(), m, hi())
		if r.err != nil || r.events[len(r.events)-1].StopReason != want {
			t.Errorf("%s: %v %+v", finish, r.err, r.events)
		}
	}
}

func TestCancelEndsStalledStream(t *testing.T) {
	fake := fakegemini.New(t)
	fake.Enqueue(fakegemini.Response{Blocks: []fakegemini.Block{fakegemini.Text("hello world, slowly")}, Fault: fakegemini.Stall(1, 10*time.Second)})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got error
	var start time.Time
	for ev, err := range open(t, env(t, fake), "gemini-2.5-flash").Stream(ctx, hi()) {
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
		t.Fatalf("err = %v", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancel took %v", d)
	}
}

func TestNoKeyIsRefusedEvenWithOneInTheProcessEnvironment(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "process-key")
	_, err := llm.Open(llm.ProviderConfig{Provider: "gemini", Model: "gemini-2.5-pro"})
	var le *llm.Error
	if !errors.As(err, &le) || !strings.Contains(le.Message, "GEMINI_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}
