// Package gemini is corvid's provider for the Google Gemini API
// (generativelanguage.googleapis.com, streamGenerateContent over SSE),
// spoken directly over net/http and encoding/json.
//
// It does not use google.golang.org/genai: that module's dependencies
// (cloud auth, opencensus, grpc, s2a) cost about 3 ms and 10 MiB at every
// start of corvid, for one HTTP request shape. Owning the request also
// settles what the SDK would otherwise decide: the key and base URL come
// from llm.ProviderConfig alone (config resolves GEMINI_API_KEY, then
// GOOGLE_API_KEY, and GEMINI_BASE_URL), nothing reads the process
// environment, and there are no hidden retries (llm.WithRetry owns
// retries). An attempt whose server goes silent for the idle timeout ends
// with a retryable error (idle.go).
//
// Start with Stream (stream.go); the wire types are in wire.go, the
// translation of an llm.Request in request.go, the SSE framing in package sse
// and the mapping of failures to *llm.Error in errors.go.
package gemini

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
)

// DefaultBaseURL is the Gemini API's address.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

// apiVersion is the API version path element; thought signatures and
// thinking configuration live in v1beta.
const apiVersion = "v1beta"

// Register adds the Gemini provider to r.
func Register(r *llm.Registry) {
	r.Register("gemini", func(cfg llm.ProviderConfig) (llm.Model, error) { return New(cfg, nil) })
}

// model is one configured Gemini model, safe for concurrent use.
type model struct {
	cfg     llm.ProviderConfig
	title   string
	keyVars []string
	baseURL string // ends in "/"
	client  *http.Client
}

// New builds a model talking through httpClient (nil: a default client).
func New(cfg llm.ProviderConfig, httpClient *http.Client) (llm.Model, error) {
	p, _ := config.LookupProvider("gemini")
	m := &model{cfg: cfg, title: p.DisplayName(), keyVars: p.KeyVars}
	if cfg.Model == "" {
		return nil, &llm.Error{Provider: "gemini", Message: "No model named for Gemini; write gemini:MODEL."}
	}
	if cfg.APIKey == "" {
		return nil, &llm.Error{Provider: "gemini", Message: "Gemini needs an API key: set GEMINI_API_KEY or run `corvid auth login gemini`."}
	}
	m.baseURL = strings.TrimSpace(cfg.BaseURL)
	if m.baseURL == "" {
		m.baseURL = DefaultBaseURL
	}
	if !strings.HasSuffix(m.baseURL, "/") {
		m.baseURL += "/"
	}
	m.client = llm.HTTPClient(m.baseURL, httpClient)
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

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs > 0 {
			return time.Duration(secs * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}
