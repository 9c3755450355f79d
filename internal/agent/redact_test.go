package agent

import (
	"strings"
	"sync"
	"testing"
)

// TestRedactorLearnsSecretsAddedAfterStart: a key read later (from the OS
// keyring, when a session switches models) is redacted from then on.
func TestRedactorLearnsSecretsAddedAfterStart(t *testing.T) {
	var mu sync.Mutex
	var later []string
	rd := newRedactor([]string{"sk-start-0123456789"}, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), later...)
	})
	if got := rd.text("a sk-start-0123456789 b sk-later-0123456789"); got != "a [REDACTED] b sk-later-0123456789" {
		t.Errorf("before: %q", got)
	}
	mu.Lock()
	later = append(later, "sk-later-0123456789")
	mu.Unlock()
	if got := rd.text("a sk-start-0123456789 b sk-later-0123456789"); strings.Contains(got, "sk-") {
		t.Errorf("after: %q", got)
	}
	if !rd.holds("key sk-later-0123456789") || rd.holds("no key here") {
		t.Error("holds does not know the learnt secret")
	}
}

// TestRedactorAddsValuesGivenLater: the header values of an MCP server the
// editor declares are redacted once the session starts it.
func TestRedactorAddsValuesGivenLater(t *testing.T) {
	rd := newRedactor(nil, nil)
	if got := rd.text("tok mcp-SECRET-0123"); got != "tok mcp-SECRET-0123" {
		t.Errorf("before: %q", got)
	}
	rd.add("mcp-SECRET-0123")
	if got := rd.text("tok mcp-SECRET-0123"); got != "tok [REDACTED]" {
		t.Errorf("after: %q", got)
	}
}
