package gemini

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
)

func TestEndpointEscapesTheModelAndKeepsResourceNames(t *testing.T) {
	m := &model{baseURL: "https://proxy.example/gemini/"}
	for id, want := range map[string]string{
		"gemini-2.5-pro":      "https://proxy.example/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
		"tunedModels/my-tune": "https://proxy.example/gemini/v1beta/tunedModels/my-tune:streamGenerateContent?alt=sse",
		"odd?id#x":            "https://proxy.example/gemini/v1beta/models/odd%3Fid%23x:streamGenerateContent?alt=sse",
	} {
		if got := m.endpoint(id); got != want {
			t.Errorf("endpoint(%q) = %s, want %s", id, got, want)
		}
	}
}

func TestReceivedSignaturesAreNormalisedToStandardBase64(t *testing.T) {
	for in, want := range map[string]string{
		"c2lnPz8-": "c2lnPz8+", // URL alphabet
		"c2lnPw":   "c2lnPw==", // unpadded
		"c2lnPw==": "c2lnPw==",
		"not b64!": "",
	} {
		if got := normalSignature(in); got != want {
			t.Errorf("normalSignature(%q) = %q, want %q", in, got, want)
		}
	}
}

// serve answers every request with status, content type and body.
func serve(t *testing.T, status int, contentType, body string) llm.Model {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	m, err := New(llm.ProviderConfig{Provider: "gemini", Model: "gemini-2.5-flash", APIKey: "gm-secret-key", BaseURL: srv.URL}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func streamErr(t *testing.T, m llm.Model) error {
	for _, err := range m.Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("hi")}}}}) {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestAnswersThatAreNotGeminiAreWordedForTheUser(t *testing.T) {
	cases := []struct {
		name, contentType, body string
		status                  int
		retryable               bool
		want                    string
	}{
		{"html error page", "text/html", "<html><body>Bad Gateway</body></html>", 502, true, "Gemini returned 502: Bad Gateway."},
		{"plain text error", "text/plain", "upstream connect error\nor disconnect", 503, true, "Gemini returned 503: upstream connect error or disconnect."},
		{"key echoed by a proxy", "text/plain", "bad key gm-secret-key", 401, false, "bad key [redacted]; check"},
		{"html page with 200", "text/html", "<!doctype html>\n<html></html>\n", 200, true, "malformed stream event"},
		{"bare error object in the stream", "text/event-stream", `{"error":{"code":503,"message":"busy","status":"UNAVAILABLE"}}` + "\n", 200, true, "Gemini returned 503 UNAVAILABLE: busy."},
		{"truncated event at the end", "text/event-stream", `data: {"candidates":[{"content":{"parts":[{"text":"hel`, 200, true, "closed the stream"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := streamErr(t, serve(t, tc.status, tc.contentType, tc.body))
			var le *llm.Error
			if !errors.As(err, &le) || le.Retryable != tc.retryable || !strings.Contains(le.Message, tc.want) {
				t.Fatalf("err = %v (%+v), want %q", err, le, tc.want)
			}
			if strings.Contains(le.Message, "gm-secret-key") {
				t.Error("message carries the key")
			}
		})
	}
}
