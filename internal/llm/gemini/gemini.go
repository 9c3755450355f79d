// Package gemini is corvid's provider for the Google Gemini API
// (generativelanguage.googleapis.com, streamGenerateContent over SSE). It
// is the only importer of google.golang.org/genai.
//
// The key and base URL come from llm.ProviderConfig alone (config resolves
// GEMINI_API_KEY, then GOOGLE_API_KEY, and GEMINI_BASE_URL). The genai
// client would otherwise pick keys, a Vertex AI backend and base URLs from
// the process environment; giving it an explicit backend, key, base URL
// and HTTP client leaves none of those paths reachable. Automatic stream
// continuation and SDK retries are off: llm.WithRetry owns retries. An
// attempt whose server goes silent for the idle timeout ends with a
// retryable error (idle.go).
//
// Start with Stream (stream.go) and request (request.go).
package gemini

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
)

// DefaultBaseURL is the Gemini API's address.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

func init() {
	llm.Register("gemini", func(cfg llm.ProviderConfig) (llm.Model, error) { return New(cfg, nil) })
}

// model is one configured Gemini model, safe for concurrent use.
type model struct {
	cfg     llm.ProviderConfig
	title   string
	keyVars []string
	baseURL string
	client  *genai.Client
}

// New builds a model talking through httpClient (nil: a default client).
func New(cfg llm.ProviderConfig, httpClient *http.Client) (llm.Model, error) {
	p, _ := config.LookupProvider("gemini")
	m := &model{cfg: cfg, title: p.DisplayName(), keyVars: p.KeyVars}
	if cfg.Model == "" {
		return nil, &llm.Error{Provider: "gemini", Message: "No model named for Gemini; write gemini:MODEL."}
	}
	if cfg.APIKey == "" {
		// genai would fall back to GOOGLE_API_KEY/GEMINI_API_KEY of the
		// process environment; refuse instead.
		return nil, &llm.Error{Provider: "gemini", Message: "Gemini needs an API key: set GEMINI_API_KEY or run `corvid auth login gemini`."}
	}
	m.baseURL = strings.TrimSpace(cfg.BaseURL)
	if m.baseURL == "" {
		m.baseURL = DefaultBaseURL
	}
	if !strings.HasSuffix(m.baseURL, "/") {
		m.baseURL += "/"
	}
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	// Wrap the transport to read retry-after headers, which genai drops.
	base := httpClient.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc := *httpClient
	hc.Transport = captureTransport{base: base}
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  &hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: m.baseURL, APIVersion: "v1beta"},
	})
	if err != nil {
		// genai's messages can include the whole config, key and all.
		return nil, &llm.Error{Provider: "gemini", Message: "Gemini client could not be configured; check GEMINI_BASE_URL."}
	}
	m.client = client
	return m, nil
}

// Info describes the model: what the caller's catalog knows, else defaults.
func (m *model) Info() llm.ModelInfo {
	info := m.cfg.Info
	if info.ID == "" {
		info.ID = "gemini:" + m.cfg.Model
	}
	return info
}

// failure is what captureTransport saw of an HTTP error answer.
type failure struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
}

type failureKey struct{}

// captureTransport records the status and retry-after header of error
// answers into the *failure carried by the request's context, and shows
// the *idleWatch it carries every byte received.
type captureTransport struct{ base http.RoundTripper }

func (t captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(req)
	if w, ok := req.Context().Value(watchKey{}).(*idleWatch); ok && err == nil && res.Body != nil {
		w.kick()
		res.Body = &activityBody{ReadCloser: res.Body, watch: w}
	}
	if err == nil && res.StatusCode >= 400 {
		if f, ok := req.Context().Value(failureKey{}).(*failure); ok {
			f.mu.Lock()
			f.status, f.retryAfter = res.StatusCode, retryAfter(res.Header)
			f.mu.Unlock()
		}
	}
	return res, err
}

func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	var secs float64
	if _, err := fmt.Sscanf(v, "%g", &secs); err == nil && secs > 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}
