package openai_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/openai"
)

// TestRedirectsStayOnTheBaseURLsOrigin: a redirect within the base URL's
// origin is followed with the key; one to another origin is refused before
// anything is sent there, as the official SDK refused it.
func TestRedirectsStayOnTheBaseURLsOrigin(t *testing.T) {
	var elsewhere []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere = append(elsewhere, r.Header.Get("Authorization"))
	}))
	defer other.Close()
	var moved []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/chat/completions", "/v1/responses":
			http.Redirect(w, r, strings.Replace(r.URL.Path, "/v1/", "/v2/", 1), http.StatusTemporaryRedirect)
		default:
			moved = append(moved, r.Header.Get("Authorization"))
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	for _, provider := range []string{"openrouter", "openai"} {
		moved, elsewhere = nil, nil
		p, _ := config.LookupProvider(provider)
		m, err := openai.New(p, llm.ProviderConfig{Provider: provider, Model: "m", APIKey: "sk-secret", BaseURL: srv.URL + "/v1"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := run(t.Context(), m, userHi())
		var le *llm.Error
		if !errors.As(r.err, &le) || !strings.Contains(le.Message, "origin must match the configured base URL") {
			t.Errorf("%s: err = %v", provider, r.err)
		}
		if len(moved) != 1 || moved[0] != "Bearer sk-secret" {
			t.Errorf("%s: the same-origin redirect got Authorization %q, want the key once", provider, moved)
		}
		if len(elsewhere) != 0 {
			t.Errorf("%s: another origin received %d requests (Authorization %q)", provider, len(elsewhere), elsewhere)
		}
	}
}
