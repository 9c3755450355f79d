package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// trustedFile lists the project directories whose .corvid/config.toml the
// user has accepted with `corvid trust`. It lives under the data dir, not in
// the project, so a repository cannot trust itself.
func trustedFile(env Env) string { return filepath.Join(DataDir(env), "trusted.json") }

type trustList struct {
	Dirs []string `json:"dirs"`
}

func readTrust(env Env) (trustList, error) {
	var t trustList
	b, err := os.ReadFile(trustedFile(env))
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return t, err
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("read %s: %w", trustedFile(env), err)
	}
	return t, nil
}

// canonicalDir makes dir absolute and resolves symlinks (when it exists), so
// one project has one entry whichever way it is reached.
func canonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return filepath.Clean(abs), nil
}

// Trust records dir as a trusted project directory.
func Trust(env Env, dir string) error {
	d, err := canonicalDir(dir)
	if err != nil {
		return err
	}
	t, err := readTrust(env)
	if err != nil {
		return err
	}
	if slices.Contains(t.Dirs, d) {
		return nil
	}
	t.Dirs = append(t.Dirs, d)
	slices.Sort(t.Dirs)
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	path := trustedFile(env)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// IsTrusted reports whether dir was recorded by Trust. An unreadable list
// trusts nothing.
func IsTrusted(env Env, dir string) bool {
	d, err := canonicalDir(dir)
	if err != nil {
		return false
	}
	t, err := readTrust(env)
	if err != nil {
		return false
	}
	return slices.Contains(t.Dirs, d)
}
