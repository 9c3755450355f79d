package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

// The ACP registry's check: a raw initialize with an empty HOME offers at
// least one auth method, and stdout stays clean (the kit fails on any
// non-protocol line).
func TestInitializeWithEmptyHomeOffersAuthMethods(t *testing.T) {
	bin := testkit.BuildCorvid(t)
	e := testkit.Start(t, bin, testkit.Options{Args: []string{"acp"}, Env: []string{"CORVID_KEYRING=off"}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, rerr := e.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"auth": map[string]any{"terminal": true}}})
	if rerr != nil {
		t.Fatal(rerr)
	}
	if !strings.Contains(string(res), `"authMethods":[{`) || !strings.Contains(string(res), `"type":"terminal"`) {
		t.Fatalf("initialize offers no auth methods (or no terminal one to a client that supports it): %s", res)
	}
	if !strings.Contains(string(res), `"logout":{}`) {
		t.Errorf("logout is not advertised: %s", res)
	}
}

// Without credentials session/new is -32000 with a how-to; a key stored
// with `corvid auth login` then `authenticate` makes it work; `logout`
// removes the key and session/new needs authentication again.
func TestAuthenticateAfterLoginThenLogout(t *testing.T) {
	bin := testkit.BuildCorvid(t)
	e := testkit.Start(t, bin, testkit.Options{Args: []string{"acp"}, Env: []string{"CORVID_KEYRING=off"}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, rerr := e.Initialize(ctx, testkit.Zed()); rerr != nil {
		t.Fatal(rerr)
	}
	newSession := func() *testkit.RPCError {
		_, rerr := e.Call(ctx, "session/new", map[string]any{"cwd": e.Dir(), "mcpServers": []any{}})
		return rerr
	}
	if rerr := newSession(); rerr == nil || rerr.Code != -32000 || !strings.Contains(rerr.Message, "ANTHROPIC_API_KEY") {
		t.Fatalf("session/new without credentials = %+v, want -32000 naming a key variable", rerr)
	}
	if _, rerr := e.Call(ctx, "authenticate", map[string]any{"methodId": "env:ANTHROPIC_API_KEY"}); rerr == nil || rerr.Code != -32000 {
		t.Fatalf("authenticate with no key anywhere = %+v, want -32000", rerr)
	}
	login := exec.Command(bin, "auth", "login", "anthropic", "--stdin")
	login.Env = e.Env()
	login.Stdin = strings.NewReader("sk-ant-test-key\n")
	if out, err := login.CombinedOutput(); err != nil {
		t.Fatalf("corvid auth login: %v\n%s", err, out)
	} else if strings.Contains(string(out), "sk-ant-test-key") {
		t.Errorf("auth login printed the key: %s", out)
	}
	if _, rerr := e.Call(ctx, "authenticate", map[string]any{"methodId": "env:ANTHROPIC_API_KEY"}); rerr != nil {
		t.Fatalf("authenticate after login: %+v", rerr)
	}
	if rerr := newSession(); rerr != nil {
		t.Fatalf("session/new after authenticate: %+v", rerr)
	}
	if _, rerr := e.Call(ctx, "logout", map[string]any{}); rerr != nil {
		t.Fatalf("logout: %+v", rerr)
	}
	if rerr := newSession(); rerr == nil || rerr.Code != -32000 {
		t.Fatalf("session/new after logout = %+v, want -32000", rerr)
	}
	if strings.Contains(e.Stderr(), "sk-ant-test-key") {
		t.Error("the key appears in corvid's log")
	}
}

// A model named in config.toml whose provider has no key does not stop
// `corvid acp`: it answers initialize with its authMethods, session/new
// answers -32000 naming the model and the key, and a key stored with `corvid
// auth login` then `authenticate` opens it. A model pinned with -m (kage's
// launch line) still exits 1 before serving.
func TestConfiguredModelWithoutKeyServesAndAsksForAuthentication(t *testing.T) {
	bin := testkit.BuildCorvid(t)
	corvidHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(corvidHome, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corvidHome, "config", "config.toml"), []byte("model = \"anthropic:claude-sonnet-4-5\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"CORVID_KEYRING=off", "CORVID_HOME=" + corvidHome}
	e := testkit.Start(t, bin, testkit.Options{Args: []string{"acp"}, Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, rerr := e.Initialize(ctx, testkit.Zed())
	if rerr != nil {
		t.Fatalf("initialize: %v (stderr %s)", rerr, e.Stderr())
	}
	if !strings.Contains(string(res.AuthMethods), `"env:ANTHROPIC_API_KEY"`) {
		t.Errorf("authMethods %s, want the Anthropic key among them", res.AuthMethods)
	}
	newSession := func() *testkit.RPCError {
		_, rerr := e.Call(ctx, "session/new", map[string]any{"cwd": e.Dir(), "mcpServers": []any{}})
		return rerr
	}
	if rerr := newSession(); rerr == nil || rerr.Code != -32000 || !strings.Contains(rerr.Message, "anthropic:claude-sonnet-4-5") || !strings.Contains(rerr.Message, "ANTHROPIC_API_KEY") {
		t.Fatalf("session/new = %+v, want -32000 naming the configured model and its key", rerr)
	}
	login := exec.Command(bin, "auth", "login", "anthropic", "--stdin")
	login.Env = e.Env()
	login.Stdin = strings.NewReader("sk-ant-test-key\n")
	if out, err := login.CombinedOutput(); err != nil {
		t.Fatalf("corvid auth login: %v\n%s", err, out)
	}
	if _, rerr := e.Call(ctx, "authenticate", map[string]any{"methodId": "env:ANTHROPIC_API_KEY"}); rerr != nil {
		t.Fatalf("authenticate after login: %+v", rerr)
	}
	if rerr := newSession(); rerr != nil {
		t.Fatalf("session/new after authenticate: %+v", rerr)
	}

	pinned := exec.Command(bin, "acp", "-m", "anthropic:claude-sonnet-4-5")
	pinned.Env = append(os.Environ(), "CORVID_KEYRING=off", "CORVID_HOME="+t.TempDir(), "ANTHROPIC_API_KEY=")
	out, err := pinned.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "no credentials for Anthropic") {
		t.Errorf("corvid acp -m anthropic:… without a key: %v, %q; want exit 1 naming the missing credentials", err, out)
	}
}

// keyedSession starts `corvid acp` on a fake Anthropic API that takes
// key, stores key as `corvid auth login` does, authenticates with it and
// opens a session; store stores another key the same way.
func keyedSession(t *testing.T, ctx context.Context, key string) (*testkit.Editor, *fakeanthropic.Server, string, func(string)) {
	t.Helper()
	bin := testkit.BuildCorvid(t)
	api := fakeanthropic.New(t)
	api.RequireAPIKey(key)
	e := testkit.Start(t, bin, testkit.Options{Args: []string{"acp"}, Env: []string{"CORVID_KEYRING=off", "ANTHROPIC_BASE_URL=" + api.URL()}})
	store := func(key string) {
		t.Helper()
		login := exec.Command(bin, "auth", "login", "anthropic", "--stdin")
		login.Env, login.Stdin = e.Env(), strings.NewReader(key+"\n")
		if out, err := login.CombinedOutput(); err != nil {
			t.Fatalf("corvid auth login: %v\n%s", err, out)
		}
	}
	store(key)
	if _, rerr := e.Initialize(ctx, testkit.Zed()); rerr != nil {
		t.Fatal(rerr)
	}
	if _, rerr := e.Call(ctx, "authenticate", map[string]any{"methodId": "env:ANTHROPIC_API_KEY"}); rerr != nil {
		t.Fatalf("authenticate: %+v", rerr)
	}
	return e, api, e.NewSession(ctx, e.Dir()), store
}

// A key revoked mid-session: the open session's prompt is refused with
// auth_required; a new key stored with `corvid auth login` and
// `authenticate` serve that same session's next prompt, not only the
// sessions opened after it.
func TestAuthenticateGivesTheOpenSessionTheNewKey(t *testing.T) {
	const revoked, fresh = "sk-ant-test-revoked-1111", "sk-ant-test-new-2222"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, api, sid, store := keyedSession(t, ctx, revoked)
	api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("the first answer")}})
	if stop, rerr := e.Prompt(ctx, sid, "one"); rerr != nil || stop != "end_turn" {
		t.Fatalf("first prompt: %q %+v", stop, rerr)
	}

	api.RequireAPIKey(fresh) // the stored key is revoked
	api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("the second answer")}})
	if _, rerr := e.Prompt(ctx, sid, "two"); rerr == nil || rerr.Code != -32000 {
		t.Fatalf("a prompt with the revoked key = %+v, want auth_required (-32000)", rerr)
	}
	store(fresh)
	if _, rerr := e.Call(ctx, "authenticate", map[string]any{"methodId": "env:ANTHROPIC_API_KEY"}); rerr != nil {
		t.Fatalf("authenticate with the new key: %+v", rerr)
	}
	if stop, rerr := e.Prompt(ctx, sid, "two again"); rerr != nil || stop != "end_turn" {
		t.Fatalf("the open session after authenticate: %q %+v, want its prompt answered", stop, rerr)
	}
	reqs := api.Requests()
	if last := reqs[len(reqs)-1]; last.APIKey() != fresh {
		t.Errorf("the open session's last request carried another key than the new one")
	}
	if strings.Contains(e.Stderr(), fresh) || strings.Contains(e.Stderr(), revoked) {
		t.Error("a key appears in corvid's log")
	}
}

// logout ends the stored key's use in the open session too: its next
// prompt needs authentication (auth_required, with a how-to), and a key
// stored again with authenticate serves it once more. A scripted session
// needs no key and goes on.
func TestLogoutEndsTheOpenSessionsKey(t *testing.T) {
	const key = "sk-ant-test-key-3333"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, api, sid, store := keyedSession(t, ctx, key)
	answer := func(text string) {
		api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text(text)}})
	}
	answer("before the logout")
	if stop, rerr := e.Prompt(ctx, sid, "one"); rerr != nil || stop != "end_turn" {
		t.Fatalf("first prompt: %q %+v", stop, rerr)
	}
	if _, rerr := e.Call(ctx, "logout", map[string]any{}); rerr != nil {
		t.Fatalf("logout: %+v", rerr)
	}
	calls := len(api.Requests())
	if _, rerr := e.Prompt(ctx, sid, "two"); rerr == nil || rerr.Code != -32000 || !strings.Contains(rerr.Message, "logged out") {
		t.Fatalf("a prompt of the open session after logout = %+v, want auth_required saying why", rerr)
	}
	if n := len(api.Requests()); n != calls {
		t.Errorf("the prompt after logout reached the provider (%d requests, %d before)", n, calls)
	}
	store(key)
	if _, rerr := e.Call(ctx, "authenticate", map[string]any{"methodId": "env:ANTHROPIC_API_KEY"}); rerr != nil {
		t.Fatalf("authenticate again: %+v", rerr)
	}
	answer("after logging in again")
	if stop, rerr := e.Prompt(ctx, sid, "three"); rerr != nil || stop != "end_turn" {
		t.Fatalf("the open session after authenticate: %q %+v", stop, rerr)
	}
}

// A session on the scripted model needs no key: a logout leaves it
// serving, its script where it was.
func TestLogoutLeavesAScriptedSessionServing(t *testing.T) {
	script := testkit.WriteScript(t, map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "first"}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "second"}}},
	}})
	e := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Args: []string{"acp", "-m", "script:" + script}, Env: []string{"CORVID_KEYRING=off"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, rerr := e.Initialize(ctx, testkit.Zed()); rerr != nil {
		t.Fatal(rerr)
	}
	sid := e.NewSession(ctx, e.Dir())
	if stop, rerr := e.Prompt(ctx, sid, "one"); rerr != nil || stop != "end_turn" {
		t.Fatalf("first prompt: %q %+v", stop, rerr)
	}
	if _, rerr := e.Call(ctx, "logout", map[string]any{}); rerr != nil {
		t.Fatalf("logout: %+v", rerr)
	}
	if stop, rerr := e.Prompt(ctx, sid, "two"); rerr != nil || stop != "end_turn" {
		t.Fatalf("the scripted session after logout: %q %+v", stop, rerr)
	}
	if got := testkit.TextOf(e.Updates(sid), "agent_message_chunk"); !strings.Contains(got, "second") {
		t.Errorf("the script restarted or stopped after logout: %q", got)
	}
}
