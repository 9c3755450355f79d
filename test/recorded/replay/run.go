package replay

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Run is corvid serving one model against a replay server, driven by the
// fake editor.
type Run struct {
	*testkit.Editor
	Server    *Server
	Ctx       context.Context
	Workspace string
	SID       string // the session Ready opened
}

// Keys are set for the providers these tests use, so that a request
// carrying the wrong one is caught.
var Keys = map[string]string{
	"ANTHROPIC_API_KEY": "sk-ant-recorded-test-key",
	"GEMINI_API_KEY":    "gm-recorded-test-key",
}

// Start spawns the built `corvid acp -m model` with baseVar pointing at s
// and extra environment entries.
func Start(t *testing.T, s *Server, baseVar, model string, extraEnv ...string) *Run {
	t.Helper()
	return StartArgs(t, s, baseVar, []string{"acp", "-m", model}, extraEnv...)
}

// StartArgs is Start with the whole command line after the binary.
func StartArgs(t *testing.T, s *Server, baseVar string, args []string, extraEnv ...string) *Run {
	t.Helper()
	env := []string{"CORVID_KEYRING=off", baseVar + "=" + s.URL}
	for k, v := range Keys {
		env = append(env, k+"="+v)
	}
	return launch(t, s, args, append(env, extraEnv...))
}

// Key is the API key Open gives the provider; tests check it never leaks
// into what the editor sees.
const Key = "sk-replay-0123456789abcdef"

// Provider names a provider's model and environment variables.
type Provider struct {
	Model   string // provider:model, as given to -m
	KeyVar  string // e.g. OPENAI_API_KEY
	BaseVar string // e.g. OPENAI_BASE_URL
	Suffix  string // appended to the server URL for the base URL, e.g. "/v1"
}

// Open starts corvid for p against s (its key var set to Key, its base URL
// var to s.URL+Suffix, then extraEnv KEY=VALUE entries) with extraArgs
// after `acp -m MODEL` (e.g. --log-level debug), initializes and opens a
// session (r.SID).
func Open(t *testing.T, p Provider, s *Server, extraEnv []string, extraArgs ...string) *Run {
	t.Helper()
	env := append([]string{"CORVID_KEYRING=off", p.KeyVar + "=" + Key, p.BaseVar + "=" + s.URL + p.Suffix}, extraEnv...)
	r := launch(t, s, append([]string{"acp", "-m", p.Model}, extraArgs...), env)
	r.Ready(t)
	return r
}

func launch(t *testing.T, s *Server, args, env []string) *Run {
	t.Helper()
	bin := testkit.BuildCorvid(t)
	workspace := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	e := testkit.Start(t, bin, testkit.Options{Args: args, Env: env, Dir: workspace})
	return &Run{Editor: e, Server: s, Ctx: ctx, Workspace: workspace}
}

// Ready initializes as a minimal client and opens a session, which it
// also keeps in r.SID.
func (r *Run) Ready(t *testing.T) string {
	t.Helper()
	if _, rerr := r.Initialize(r.Ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	r.SID = r.NewSession(r.Ctx, r.Workspace)
	return r.SID
}

// SetThought sets r.SID's thought level (off, low, medium, high, max).
func (r *Run) SetThought(t *testing.T, level string) {
	t.Helper()
	if _, rerr := r.Call(r.Ctx, "session/set_config_option", map[string]any{"sessionId": r.SID, "configId": "thought_level", "value": level}); rerr != nil {
		t.Fatalf("set thought_level %s: %v", level, rerr)
	}
}

// Used is the used and cost (0 when absent) of r.SID's last usage_update.
func (r *Run) Used(t *testing.T) (used int64, cost float64) {
	t.Helper()
	used, _, c := UsedOfLastUsage(t, r.Updates(r.SID))
	if c != nil {
		cost = *c
	}
	return used, cost
}

// SetOption sets a session config option.
func (r *Run) SetOption(t *testing.T, sid, id string, value any) {
	t.Helper()
	r.MustCall(r.Ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": id, "value": value}, nil)
}

// MustPrompt sends text and fails unless the turn ends with want.
func (r *Run) MustPrompt(t *testing.T, sid, text, want string) {
	t.Helper()
	stop, rerr := r.Prompt(r.Ctx, sid, text)
	if rerr != nil || stop != want {
		t.Fatalf("prompt %q: stop %q, error %v\nstderr:\n%s", text, stop, rerr, r.Stderr())
	}
}

// UsedOfLastUsage is the last usage_update's used and size.
func UsedOfLastUsage(t *testing.T, ups []testkit.Update) (used, size int64, cost *float64) {
	t.Helper()
	us := testkit.OfKind(ups, "usage_update")
	if len(us) == 0 {
		t.Fatal("no usage_update")
	}
	var u struct {
		Used int64 `json:"used"`
		Size int64 `json:"size"`
		Cost *struct {
			Amount float64 `json:"amount"`
		} `json:"cost"`
	}
	if err := json.Unmarshal(us[len(us)-1].Raw, &u); err != nil {
		t.Fatal(err)
	}
	if u.Cost != nil {
		cost = &u.Cost.Amount
	}
	return u.Used, u.Size, cost
}
