package anthropic

import (
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

func TestRequestCarriesOnlyTheConfiguredKey(t *testing.T) {
	// The provider must read none of these: a wrong key, a token and a base URL
	// that leads nowhere.
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: sk-ant-from-env")
	t.Setenv("ANTHROPIC_PROFILE", "nonexistent")

	fake := fakeanthropic.New(t)
	fake.RequireAPIKey(testKey)
	fake.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")}})
	mustCollect(t, newTestModel(t, fake, 0), hi())

	req := fake.Requests()[0]
	if got := req.APIKey(); got != testKey {
		t.Fatalf("x-api-key = %q, want the configured key", got)
	}
	if v := req.Header.Get("Authorization"); v != "" {
		t.Errorf("authorization = %q, want no second credential header", v)
	}
	for name, values := range req.Header {
		for _, v := range values {
			if strings.Contains(v, "from-env") {
				t.Errorf("header %s = %q comes from the environment", name, v)
			}
			if strings.Contains(v, testKey) && !strings.EqualFold(name, "X-Api-Key") {
				t.Errorf("header %s carries the key", name)
			}
		}
	}
}

func TestRegisteredAsAnthropicWithDefaultInfo(t *testing.T) {
	t.Parallel()
	m, err := llm.Open(llm.ProviderConfig{Provider: "anthropic", Model: "claude-new", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	want := llm.ModelInfo{ID: "anthropic:claude-new", ContextWindow: 200000, MaxOutput: 32000, Images: true, Reasoning: true}
	if got := m.Info(); got != want {
		t.Fatalf("Info() = %+v, want %+v", got, want)
	}

	known := llm.ModelInfo{ID: "anthropic:claude-small", ContextWindow: 100000, MaxOutput: 4096}
	m, err = New(llm.ProviderConfig{Provider: "anthropic", Model: "claude-small", Info: known})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Info(); got != known {
		t.Fatalf("Info() = %+v, want the catalog's %+v", got, known)
	}
}

func TestMaxTokensDefaultsToModelMaxOutput(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")}})
	mustCollect(t, newTestModel(t, fake, 0), hi())
	if got := fake.Requests()[0].Body.MaxTokens; got != 32000 {
		t.Fatalf("max_tokens = %d, want 32000", got)
	}
}
