package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// trustedFile lists the project directories whose .corvid/config.toml the
// user has accepted with `corvid trust`, each with the SHA-256 of the file
// as it was accepted. It lives under the data dir, not in the project, so a
// repository cannot trust itself; and trust binds to the file's content, so
// a config that changes after `corvid trust` (a pull, or a model editing
// it) loosens nothing until the user trusts it again.
func trustedFile(env Env) string { return filepath.Join(DataDir(env), "trusted.json") }

type trustList struct {
	// Dirs is the list older corvid versions wrote (no content binding).
	// Such entries no longer trust anything; `corvid trust` replaces them.
	Dirs     []string       `json:"dirs,omitempty"`
	Projects []trustedEntry `json:"projects,omitempty"`
	// Files are single files trusted by content: agent profiles and
	// blueprints that came with a project (trustfile.go).
	Files []trustedFileEntry `json:"files,omitempty"`
}

type trustedEntry struct {
	Dir    string `json:"dir"`
	SHA256 string `json:"sha256"`
}

// TrustState is how a project's config file stands with the trust list.
type TrustState int

const (
	Untrusted TrustState = iota // never trusted
	Trusted                     // trusted with exactly this content
	Changed                     // trusted once, but the file differs now (or was trusted by an older corvid)
)

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

func contentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Trust records dir as trusted with the current content of its
// .corvid/config.toml (an absent file trusts nothing that appears later).
func Trust(env Env, dir string) error {
	d, err := canonicalDir(dir)
	if err != nil {
		return err
	}
	content, err := os.ReadFile(filepath.Join(d, ProjectConfigName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	t, err := readTrust(env)
	if err != nil {
		return err
	}
	t.Dirs = slices.DeleteFunc(t.Dirs, func(x string) bool { return x == d })
	t.Projects = slices.DeleteFunc(t.Projects, func(e trustedEntry) bool { return e.Dir == d })
	if content != nil {
		t.Projects = append(t.Projects, trustedEntry{Dir: d, SHA256: contentHash(content)})
	}
	return writeTrust(env, t)
}

func writeTrust(env Env, t trustList) error {
	slices.SortFunc(t.Projects, func(a, b trustedEntry) int { return strings.Compare(a.Dir, b.Dir) })
	slices.SortFunc(t.Files, func(a, b trustedFileEntry) int { return strings.Compare(a.Path, b.Path) })
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

// TrustedProject is one entry of the trust list, with how its config file
// stands now.
type TrustedProject struct {
	Dir   string
	State TrustState // Trusted, or Changed (the file differs or is gone)
}

// TrustedProjects lists every trusted project directory, sorted.
func TrustedProjects(env Env) ([]TrustedProject, error) {
	t, err := readTrust(env)
	if err != nil {
		return nil, err
	}
	var out []TrustedProject
	for _, e := range t.Projects {
		st := Changed
		if b, err := os.ReadFile(filepath.Join(e.Dir, ProjectConfigName)); err == nil && contentHash(b) == e.SHA256 {
			st = Trusted
		}
		out = append(out, TrustedProject{Dir: e.Dir, State: st})
	}
	for _, d := range t.Dirs {
		out = append(out, TrustedProject{Dir: d, State: Changed})
	}
	slices.SortFunc(out, func(a, b TrustedProject) int { return strings.Compare(a.Dir, b.Dir) })
	return out, nil
}

// Revoke removes dir from the trust list, with every file trusted below
// it; it reports whether anything was there.
func Revoke(env Env, dir string) (bool, error) {
	d, err := canonicalDir(dir)
	if err != nil {
		return false, err
	}
	t, err := readTrust(env)
	if err != nil {
		return false, err
	}
	n := len(t.Dirs) + len(t.Projects) + len(t.Files)
	t.Dirs = slices.DeleteFunc(t.Dirs, func(x string) bool { return x == d })
	t.Projects = slices.DeleteFunc(t.Projects, func(e trustedEntry) bool { return e.Dir == d })
	t.Files = slices.DeleteFunc(t.Files, func(e trustedFileEntry) bool { return within(e.Path, d) })
	if len(t.Dirs)+len(t.Projects)+len(t.Files) == n {
		return false, nil
	}
	return true, writeTrust(env, t)
}

// TrustOf says whether dir's config file, whose content is given, is
// trusted. An unreadable list trusts nothing.
func TrustOf(env Env, dir string, content []byte) TrustState {
	d, err := canonicalDir(dir)
	if err != nil {
		return Untrusted
	}
	t, err := readTrust(env)
	if err != nil {
		return Untrusted
	}
	for _, e := range t.Projects {
		if e.Dir == d {
			if e.SHA256 == contentHash(content) {
				return Trusted
			}
			return Changed
		}
	}
	if slices.Contains(t.Dirs, d) {
		return Changed
	}
	return Untrusted
}

// IsTrusted reports whether dir's .corvid/config.toml is trusted as it is
// now.
func IsTrusted(env Env, dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ProjectConfigName))
	if err != nil {
		return false
	}
	return TrustOf(env, dir, b) == Trusted
}
