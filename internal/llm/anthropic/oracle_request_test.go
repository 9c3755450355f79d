package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// The official SDK is the oracle for the request body: for each request
// below, the body corvid encodes must be the one the SDK's own parameter
// types encode (sdkParams, the request building corvid used on the SDK),
// and decoding it with the SDK's MessageNewParams and encoding it again
// must give it back unchanged: every field corvid sends is one the SDK
// knows, with the type it expects.

func oracleRequests() map[string]llm.Request {
	png := llm.Part{Type: llm.PartImage, MimeType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nfake")}
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	tools := []llm.ToolSpec{
		{Name: "read", Description: "Read a file.", InputSchema: schema},
		{Name: "list"}, // no description, no schema
	}
	history := []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("what is <this> & that?"), png, llm.Text("")}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Type: llm.PartThinking, Text: "Let me look.", Signature: "EqQBCgIYAhIM1gbc+/=="},
			{Type: llm.PartThinking, Text: "cut off, unsigned"},
			{Type: llm.PartThinking, Signature: redactedPrefix + "ENCRYPTED+/=="},
			{Type: llm.PartThinking, Signature: "signed-but-empty"},
			llm.Text("Reading it."),
			{Type: llm.PartToolUse, ToolUseID: "toolu_1", ToolName: "read", Input: json.RawMessage(`{"path": "a.go"}`)},
			{Type: llm.PartToolUse, ToolUseID: "toolu_2", ToolName: "list"},
			{Type: llm.PartToolUse, ToolUseID: "toolu_3", ToolName: "read", Input: json.RawMessage(`{"path":`)},
		}},
		{Role: llm.RoleUser, Parts: []llm.Part{
			{Type: llm.PartToolResult, ToolUseID: "toolu_1", Text: "package a\n", Images: []llm.Part{png}},
			{Type: llm.PartToolResult, ToolUseID: "toolu_2", IsError: true, Text: "no such tool"},
			{Type: llm.PartToolResult, ToolUseID: "toolu_3"},
		}},
	}
	endsInThinking := []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("hi")}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("Hello"), {Type: llm.PartThinking, Text: "t", Signature: "s"}}},
	}
	return map[string]llm.Request{
		"minimal":                {Messages: []llm.Message{userText("hi")}},
		"no messages":            {},
		"only dropped parts":     {Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("")}}, userText("x")}},
		"system and tools":       {System: "You are terse.", Tools: tools, Messages: []llm.Message{userText("hi")}, MaxTokens: 512},
		"full history":           {System: "s", Tools: tools, Messages: history, ThinkingBudget: 8192, MaxTokens: 20000},
		"budget above max":       {Messages: []llm.Message{userText("hi")}, ThinkingBudget: 16384, MaxTokens: 1000},
		"budget below minimum":   {Messages: []llm.Message{userText("hi")}, ThinkingBudget: 500},
		"model override":         {Model: "claude-sonnet-4-5-20250929", Messages: []llm.Message{userText("hi")}, ThinkingBudget: 2048},
		"adaptive low":           {Model: "claude-opus-4-6", Messages: history, ThinkingBudget: 2048},
		"adaptive medium":        {Model: "claude-opus-4-6", Messages: []llm.Message{userText("hi")}, ThinkingBudget: 8192},
		"adaptive high":          {Model: "claude-opus-4-6", Messages: []llm.Message{userText("hi")}, ThinkingBudget: 16384},
		"adaptive max":           {Model: "claude-opus-4-6", Messages: []llm.Message{userText("hi")}, ThinkingBudget: 32000},
		"adaptive sonnet":        {Model: "claude-sonnet-4-6", Messages: []llm.Message{userText("hi")}, ThinkingBudget: 32000},
		"ends in thinking":       {Messages: endsInThinking},
		"only thinking last":     {Messages: []llm.Message{userText("hi"), {Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartThinking, Text: "t", Signature: "s"}}}}},
		"image last":             {Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("see"), png}}}},
		"invalid UTF-8 and HTML": {System: "<sys>\xff", Messages: []llm.Message{userText("a\u2028b <script>&amp;\xfe")}},
	}
}

func oracleModel(t *testing.T) *model {
	t.Helper()
	m, err := New(llm.ProviderConfig{Provider: "anthropic", Model: "claude-test-1", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	return m.(*model)
}

func TestRequestBodyIsTheSDKsRequestBody(t *testing.T) {
	t.Parallel()
	m := oracleModel(t)
	for name, req := range oracleRequests() {
		t.Run(name, func(t *testing.T) {
			b, err := m.body(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			p, err := sdkParams(m, req)
			if err != nil {
				t.Fatal(err)
			}
			want := sdkBody(t, p)
			if !sameJSON(t, got, want) {
				t.Errorf("corvid's body differs from the SDK's\ncorvid: %s\nSDK:    %s", got, want)
			}

			// Decoded by the SDK's types and encoded again: nothing lost.
			var dec anthropic.MessageNewParams
			if err := json.Unmarshal(got, &dec); err != nil {
				t.Fatalf("the SDK cannot decode corvid's body: %v\n%s", err, got)
			}
			if again := sdkBody(t, dec); !sameJSON(t, got, again) {
				t.Errorf("the SDK's types do not keep corvid's body\ncorvid: %s\nSDK:    %s", got, again)
			}
		})
	}
}

// sdkBody is p as the SDK sends it with stream:true.
func sdkBody(t *testing.T, p anthropic.MessageNewParams) []byte {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	obj["stream"] = json.RawMessage("true")
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRequestErrorsAreTheSDKBuildersErrors(t *testing.T) {
	t.Parallel()
	m := oracleModel(t)
	for name, req := range map[string]llm.Request{
		"bad role":   {Messages: []llm.Message{{Role: "system", Parts: []llm.Part{llm.Text("x")}}}},
		"bad schema": {Tools: []llm.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`{"type":`)}}, Messages: []llm.Message{userText("x")}},
	} {
		_, err := m.body(req)
		_, sdkErr := sdkParams(m, req)
		if err == nil || sdkErr == nil || err.Error() != sdkErr.Error() {
			t.Errorf("%s: error %v, the SDK builder's %v", name, err, sdkErr)
		}
	}
}

// captured is one request a captureServer received.
type captured struct {
	method, path string
	header       http.Header
	body         []byte
}

// captureServer answers every request, at any path, with the recorded
// text stream, and keeps what it received.
func captureServer(t *testing.T) (*httptest.Server, *[]captured) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(recordedDir, "anthropic-text.chunks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	stream := replay.Chunks(raw, true).Body
	var mu sync.Mutex
	var got []captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, captured{r.Method, r.URL.Path, r.Header.Clone(), body})
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stream)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

// On the wire: the same request sent by the SDK's client (configured as
// corvid configured it) and by corvid reaches the server at the same path,
// under a base URL with or without a path, with the same body and the same
// key, version and beta headers.
func TestRequestOnTheWireIsTheSDKClientsRequest(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"", "/proxy/anthropic", "/proxy/anthropic/"} {
		for _, long := range []bool{false, true} {
			srv, reqs := captureServer(t)
			base := srv.URL + prefix
			m, err := New(llm.ProviderConfig{Provider: "anthropic", Model: "claude-test-1", APIKey: testKey, BaseURL: base})
			if err != nil {
				t.Fatal(err)
			}
			req := oracleRequests()["full history"]
			if long {
				req.ContextWindow = 1_000_000
			}
			mustCollect(t, m, req)

			p, err := sdkParams(m.(*model), req)
			if err != nil {
				t.Fatal(err)
			}
			opts := []option.RequestOption{
				option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0), option.WithBaseURL(base),
				option.WithAPIKey(testKey), option.WithHeaderDel("Authorization"), option.WithHeader("X-Api-Key", testKey),
			}
			if long {
				opts = append(opts, option.WithHeaderAdd("anthropic-beta", longContextBeta))
			}
			client := anthropic.NewClient(opts...)
			stream := client.Messages.NewStreaming(t.Context(), p)
			for stream.Next() {
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			stream.Close()

			if len(*reqs) != 2 {
				t.Fatalf("base %s: %d requests reached the server", base, len(*reqs))
			}
			got, want := (*reqs)[0], (*reqs)[1]
			if got.path != want.path || got.method != want.method || got.path != prefixPath(prefix)+"/v1/messages" {
				t.Errorf("base %s: corvid sent %s %s, the SDK %s %s", base, got.method, got.path, want.method, want.path)
			}
			if !sameJSON(t, got.body, want.body) {
				t.Errorf("body differs\ncorvid: %s\nSDK:    %s", got.body, want.body)
			}
			for _, h := range []string{"X-Api-Key", "Anthropic-Version", "Anthropic-Beta", "Content-Type", "Accept", "Authorization"} {
				if g, w := got.header.Values(h), want.header.Values(h); !slices.Equal(g, w) {
					t.Errorf("header %s: corvid %q, the SDK %q", h, g, w)
				}
			}
		}
	}
}

func prefixPath(p string) string { return strings.TrimSuffix(p, "/") }

// Error answers: what the SDK's client reads from each (status, error type
// and message, retry-after), worded by corvid's apiError, is what corvid
// reports reading it itself.
func TestErrorAnswersReadAsTheSDKReadsThem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		header string // "Name: value"
		body   string
	}{
		{429, "Retry-After: 2", `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"},"request_id":"req_1"}`},
		{529, "", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{500, "Retry-After-Ms: 1500", `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`},
		{401, "", `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`},
		{400, "", `{"type":"error","error":{"type":"invalid_request_error"}}`},
		{502, "", "<html><body>Bad gateway</body></html>"},
		{413, "", "request too large"},
		{503, "", ""},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if k, v, ok := strings.Cut(c.header, ": "); ok {
					w.Header().Set(k, v)
				}
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			}))
			defer srv.Close()
			m, err := New(llm.ProviderConfig{Provider: "anthropic", Model: "claude-test-1", APIKey: testKey, BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			_, got := collect(t.Context(), m, hi())

			client := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0),
				option.WithBaseURL(srv.URL), option.WithAPIKey(testKey))
			p, _ := sdkParams(m.(*model), hi())
			stream := client.Messages.NewStreaming(t.Context(), p)
			for stream.Next() {
			}
			var apiErr *anthropic.Error
			if !errors.As(stream.Err(), &apiErr) {
				t.Fatalf("the SDK read %v", stream.Err())
			}
			want := m.(*model).scrub(apiError(apiErr.StatusCode,
				apiErrorBody{Type: string(apiErr.Type()), Message: apiErr.Message}, apiErr.Response.Header))

			if got == nil || got.Error() != want.Error() {
				t.Errorf("corvid: %v\nSDK:    %v", got, want)
			}
			gh, _ := errors.AsType[llm.RetryAfterError](got)
			wh, _ := errors.AsType[llm.RetryAfterError](want)
			if (gh == nil) != (wh == nil) || gh != nil && gh.RetryAfter() != wh.RetryAfter() {
				t.Errorf("retry-after hint: corvid %v, SDK %v", gh, wh)
			}
		})
	}
}
