package providers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// relayKey is the key a [providers.NAME] table names with api_key_env.
const relayKey = "RELAY_API_KEY"

func init() { keys[relayKey] = "sk-test-relay-key" }

// withConfig returns p started with a config.toml written once its fake
// is up: toml gets the fake's base URL as its one %s. The provider's own
// base-URL variable is not set (baseVar points at an unused name), so
// the request can only reach the fake through the config file.
func withConfig(t *testing.T, p provider, toml string) (provider, []string) {
	home := t.TempDir()
	start := p.start
	p.start = func(t *testing.T) (fake, string) {
		f, base := start(t)
		dir := filepath.Join(home, "config")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(fmt.Sprintf(toml, base)), 0o600); err != nil {
			t.Fatal(err)
		}
		return f, base
	}
	p.baseVar = "UNUSED_TEST_BASE_URL"
	p.keyVar = relayKey
	return p, []string{"CORVID_HOME=" + home}
}

func byName(name string) provider {
	for _, p := range providers {
		if p.name == name {
			return p
		}
	}
	panic(name)
}

// checkHeader fails unless every request to r's fake carried name: value.
func checkHeader(t *testing.T, r *run, name, value string) {
	t.Helper()
	reqs := r.fake.requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the fake")
	}
	for i, req := range reqs {
		if got := req.Header.Get(name); got != value {
			t.Errorf("request %d: header %s = %q, want %q (from [providers.*.headers])", i+1, name, got, value)
		}
	}
}

// promptOnce sends one prompt that the fake answers with text.
func promptOnce(t *testing.T, r *run) []testkit.Update {
	t.Helper()
	r.fake.enqueue(reply{text: answer, usage: usage})
	sid := r.ready(t)
	if stop, rerr := r.Prompt(r.ctx, sid, "hello"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: stop %q, error %v", stop, rerr)
	}
	ups := r.Updates(sid)
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != answer {
		t.Errorf("agent_message_chunk text %q, want %q", got, answer)
	}
	return ups
}

// TestProviderOverrideInConfigSendsBaseURLKeyAndHeaders puts each API
// family's built-in provider behind a "gateway" with kage's
// [providers.NAME] table: base_url, api_key_env and headers. The requests
// must reach the gateway with the named key and every header.
func TestProviderOverrideInConfigSendsBaseURLKeyAndHeaders(t *testing.T) {
	for _, name := range []string{"anthropic", "gemini", "openai", "openrouter"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, env := withConfig(t, byName(name), `
[providers.`+name+`]
base_url = "%s"
api_key_env = "`+relayKey+`"

[providers.`+name+`.headers]
X-Team = "infra"
X-Gateway-Route = "corvid-tests"
`)
			r := start(t, p, env...)
			promptOnce(t, r)
			checkHeader(t, r, "X-Team", "infra")
			checkHeader(t, r, "X-Gateway-Route", "corvid-tests")
		})
	}
}

// TestCustomProviderOfEachAPIFamilyFromKageConfig defines kage's
// [providers.custom.ID] with kind/api of each family and a models table,
// and checks the request reaches that family's fake with the headers, and
// that usage_update sizes the context by the table's context.
func TestCustomProviderOfEachAPIFamilyFromKageConfig(t *testing.T) {
	cases := []struct {
		family, api string
		like        provider
		endpoint    string // a body key only that family's request has
	}{
		{"anthropic", `kind = "anthropic"`, byName("anthropic"), "max_tokens"},
		{"gemini", `kind = "gemini"`, byName("gemini"), "contents"},
		{"openai-chat", `kind = "openai"`, byName("openrouter"), "messages"},
		{"openai-responses", `api = "openai-responses"`, byName("openai"), "input"},
	}
	for _, c := range cases {
		t.Run(c.family, func(t *testing.T) {
			t.Parallel()
			p, env := withConfig(t, c.like, `
[providers.custom.relay]
`+c.api+`
base_url = "%s"
display_name = "Relay"
api_key_env = "`+relayKey+`"
thinking = true
caching = true
tool_use = true

[providers.custom.relay.headers]
X-Relay-Tenant = "team-7"

[[providers.custom.relay.models]]
id = "relay-large"
name = "Relay Large"
context = 150000
max_output = 8192
`)
			p.name, p.model = "relay", "relay:relay-large"
			r := start(t, p, env...)
			ups := promptOnce(t, r)
			checkHeader(t, r, "X-Relay-Tenant", "team-7")
			req := r.fake.requests()[0]
			if _, ok := req.Body[c.endpoint]; !ok {
				t.Errorf("request body has no %q: not the %s API (body keys %v)", c.endpoint, c.family, keysOf(req.Body))
			}
			us := testkit.OfKind(ups, "usage_update")
			if len(us) == 0 {
				t.Fatal("no usage_update")
			}
			var u struct{ Size int64 }
			if err := json.Unmarshal(us[len(us)-1].Raw, &u); err != nil {
				t.Fatal(err)
			}
			if u.Size != 150000 {
				t.Errorf("usage_update size %d, want 150000 from [[providers.custom.relay.models]] context", u.Size)
			}
		})
	}
}

func keysOf(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return strings.Join(ks, ",")
}
