package main

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/corvid-agent/corvid/internal/acpserver"
	"github.com/corvid-agent/corvid/internal/config"
)

// SIGHUP: `corvid serve` reads the user's config.toml again
// (docs/serve.md, "Signals"). The daemon reads that file only at start and
// on SIGHUP: every session that starts uses the content last read, so an
// edit half-saved, or broken, changes nothing until SIGHUP, and a broken
// file on SIGHUP is refused and the previous content kept.
//
// Live after SIGHUP: the [permissions] rules, default_mode, sandbox and
// [mcp_servers] for sessions that start (new, load, resume) from then on,
// and interaction_timeout and on_disconnect (unless --on-disconnect is
// given) for connections opened from then on. Everything
// else (model, providers and their model lists, identity, code_mode,
// pass_env, and every flag, --log-level included) needs a restart; a
// reload that changes one of them says so in the log.

// userConfig is the user's config.toml as last read: its content (nil:
// there is none).
type userConfig struct {
	mu      sync.Mutex
	content []byte
}

func (u *userConfig) get() []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.content
}

func (u *userConfig) set(b []byte) {
	u.mu.Lock()
	u.content = b
	u.mu.Unlock()
}

// readUserConfig reads the file (nil, nil: there is none).
func readUserConfig(env config.Env) ([]byte, error) {
	b, err := os.ReadFile(config.UserConfigPath(env))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// loadConfig is config.Load, over the content last read when the command
// keeps one (serve).
func (c *acpCmd) loadConfig(env config.Env, dir string) (*config.File, error) {
	if c.userConfig == nil {
		return config.Load(env, dir)
	}
	return config.LoadWithUser(env, dir, c.userConfig.get())
}

// reloader answers SIGHUP.
type reloader struct {
	c    *serveCmd
	env  config.Env
	cwd  string
	log  *slog.Logger
	file *config.File                      // as last loaded (cwd's view)
	opts atomic.Pointer[acpserver.Options] // what a new connection gets
}

// connOptions is what a connection opened now gets.
func (r *reloader) connOptions() acpserver.Options { return *r.opts.Load() }

// reload reads config.toml again; a file that does not read, parse or
// validate as at start is refused, and the previous content stays.
func (r *reloader) reload() {
	path := config.UserConfigPath(r.env)
	keep := func(err error) {
		r.log.Error("SIGHUP: config not reloaded; keeping the previous configuration", "file", path, "err", err)
	}
	b, err := readUserConfig(r.env)
	if err != nil {
		keep(err)
		return
	}
	f, err := config.LoadWithUser(r.env, r.cwd, b)
	if err != nil {
		keep(err)
		return
	}
	if _, err := r.c.permissions(f); err != nil {
		keep(err)
		return
	}
	if _, err := r.c.sandbox(r.env, f); err != nil {
		keep(err)
		return
	}
	old := r.file
	r.c.userConfig.set(b)
	r.file = f
	o := r.connOptions()
	o.InteractionTimeout = f.InteractionTimeout
	o.OnDisconnect = r.c.onDisconnect(f)
	o.MCPConfigured = len(f.MCPServers) > 0
	r.opts.Store(&o)
	r.log.Info("SIGHUP: config reloaded", "file", path,
		"interaction_timeout", f.InteractionTimeout.String(), "on_disconnect", o.OnDisconnect,
		"permission_rules", len(f.Permissions.Allow)+len(f.Permissions.Ask)+len(f.Permissions.Deny),
		"default_mode", f.DefaultMode, "sandbox", f.Sandbox, "mcp_servers", len(f.MCPServers),
		"applies_to", "sessions and connections that start from now on")
	if keys := restartKeys(old, f); len(keys) > 0 {
		r.log.Warn("SIGHUP: these settings changed but take effect only after a restart", "keys", keys)
	}
}

// restartKeys names the settings that differ between a and b and that a
// reload does not apply.
func restartKeys(a, b *config.File) []string {
	var out []string
	if a.Model != b.Model {
		out = append(out, "model")
	}
	if !slices.Equal(sortedNames(a.Providers), sortedNames(b.Providers)) || !sameModels(a, b) {
		out = append(out, "providers")
	}
	if !slices.Equal(sortedNames(a.Custom), sortedNames(b.Custom)) {
		out = append(out, "custom")
	}
	if a.Identity != b.Identity {
		out = append(out, "identity")
	}
	if a.CodeMode != b.CodeMode {
		out = append(out, "code_mode")
	}
	if !slices.Equal(a.PassEnv, b.PassEnv) {
		out = append(out, "pass_env")
	}
	return out
}

// sameModels says every provider lists the same model ids in a and b.
func sameModels(a, b *config.File) bool {
	for name, pa := range a.Providers {
		pb := b.Providers[name]
		if len(pa.Models) != len(pb.Models) {
			return false
		}
		for i := range pa.Models {
			if pa.Models[i].ID != pb.Models[i].ID {
				return false
			}
		}
	}
	return true
}
