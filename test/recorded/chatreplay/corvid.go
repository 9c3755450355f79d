package chatreplay

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Key is the API key every replayed provider gets; tests check it never
// leaks into what the editor sees.
const Key = "sk-replay-0123456789abcdef"

// Corvid is the built binary serving one model over ACP, its provider's base
// URL pointing at a replay Server.
type Corvid struct {
	*testkit.Editor
	Ctx context.Context
	SID string
}

// Provider names a provider's model and environment variables.
type Provider struct {
	Model   string // provider:model, as given to -m
	KeyVar  string // e.g. OPENAI_API_KEY
	BaseVar string // e.g. OPENAI_BASE_URL
	Suffix  string // appended to the server URL for the base URL, e.g. "/v1"
}

// Run starts corvid for p against s with extra arguments after `acp -m
// MODEL` (e.g. --log-level debug), initializes and opens a session.
func Run(t *testing.T, p Provider, s *Server, extraArgs ...string) *Corvid {
	t.Helper()
	return RunEnv(t, p, s, nil, extraArgs...)
}

// RunEnv is Run with extra KEY=VALUE environment entries.
func RunEnv(t *testing.T, p Provider, s *Server, extraEnv []string, extraArgs ...string) *Corvid {
	t.Helper()
	bin := testkit.BuildCorvid(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	ws := t.TempDir()
	env := append([]string{"CORVID_KEYRING=off", p.KeyVar + "=" + Key, p.BaseVar + "=" + s.URL + p.Suffix}, extraEnv...)
	args := append([]string{"acp", "-m", p.Model}, extraArgs...)
	e := testkit.Start(t, bin, testkit.Options{Args: args, Env: env, Dir: ws})
	if _, rerr := e.Initialize(ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	return &Corvid{Editor: e, Ctx: ctx, SID: e.NewSession(ctx, ws)}
}

// SetThought sets the session's thought level (off, low, medium, high, max).
func (c *Corvid) SetThought(t *testing.T, level string) {
	t.Helper()
	if _, rerr := c.Call(c.Ctx, "session/set_config_option", map[string]any{"sessionId": c.SID, "configId": "thought_level", "value": level}); rerr != nil {
		t.Fatalf("set thought_level %s: %v", level, rerr)
	}
}

// Used is the `used` of the last usage_update.
func (c *Corvid) Used(t *testing.T) (used int64, cost float64) {
	t.Helper()
	us := testkit.OfKind(c.Updates(c.SID), "usage_update")
	if len(us) == 0 {
		t.Fatal("no usage_update")
	}
	var u struct {
		Used int64 `json:"used"`
		Cost *struct {
			Amount float64 `json:"amount"`
		} `json:"cost"`
	}
	if err := json.Unmarshal(us[len(us)-1].Raw, &u); err != nil {
		t.Fatal(err)
	}
	if u.Cost != nil {
		cost = u.Cost.Amount
	}
	return u.Used, cost
}
