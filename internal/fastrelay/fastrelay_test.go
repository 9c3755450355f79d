package fastrelay

import (
	"testing"

	"github.com/corvid-agent/corvid/internal/config"
)

func TestTargetTakesOnlyThePlainLaunchLine(t *testing.T) {
	env := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		want string
		ok   bool
	}{
		{[]string{"acp", "--connect", "unix:/r/s.sock"}, "/r/s.sock", true},
		{[]string{"acp", "--connect=unix:/r/s.sock"}, "/r/s.sock", true},
		{[]string{"rpc", "--connect", "unix:/r/s.sock"}, "/r/s.sock", true},
		{[]string{"agent-client", "--connect", "unix:/r/s.sock"}, "/r/s.sock", true},
		{[]string{"acp", "--connect", "unix:"}, "", false},
		{[]string{"acp", "--connect="}, "", false},
		{[]string{"acp", "--connect", "ws://127.0.0.1:1/acp"}, "", false},
		{[]string{"acp", "--connect", "auto"}, "", false}, // no HOME: relay.go decides
		{[]string{"acp", "--connect", "unix:/r/s.sock", "--compat", "codebuddy"}, "", false},
		{[]string{"acp", "--log-level", "debug", "--connect", "unix:/r/s.sock"}, "", false},
		{[]string{"serve", "--connect", "unix:/r/s.sock"}, "", false},
		{[]string{"--acp", "--connect", "unix:/r/s.sock"}, "", false},
		{[]string{"acp"}, "", false},
		{nil, "", false},
	} {
		got, ok := target(c.args, env)
		if got != c.want || ok != c.ok {
			t.Errorf("target(%q) = %q, %v; want %q, %v", c.args, got, ok, c.want, c.ok)
		}
	}
}

// TestServeSocketIsConfigs: --connect auto relays to the socket that
// cmd/corvid's relay (config.ServeSocket) would, whenever the environment
// alone decides it.
func TestServeSocketIsConfigs(t *testing.T) {
	for _, env := range []config.MapEnv{
		{"CORVID_HOME": "/c", "XDG_RUNTIME_DIR": "/x", "HOME": "/h"},
		{"CORVID_HOME": "rel/c/", "HOME": "/h"},
		{"XDG_RUNTIME_DIR": "/run/user/1000/", "XDG_DATA_HOME": "/d", "HOME": "/h"},
		{"XDG_DATA_HOME": "/d//x", "HOME": "/h"},
		{"HOME": "/home/u/", "TMPDIR": "/t"},
		{"HOME": "/home/u/../v"},
	} {
		got := serveSocket(env.Getenv)
		if want := config.ServeSocket(env); got != want {
			t.Errorf("%v: %q; config.ServeSocket: %q", env, got, want)
		}
	}
	if got := serveSocket(config.MapEnv{"TMPDIR": "/t"}.Getenv); got != "" {
		t.Errorf("without HOME: %q; want \"\" (relay.go decides)", got)
	}
}
