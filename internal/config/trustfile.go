package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A project brings more than its config file: agent profiles in
// .corvid/agents/ and a Leviath agent.leviath can hold seed commands that
// run when a session starts. Such a file is trusted on its own, by path and
// by content, exactly as a project config is: `corvid trust` records the
// SHA-256 of what the user accepted, and a file that changes afterwards
// (a pull, a model's edit) is untrusted until it is trusted again.

type trustedFileEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// canonicalFile makes path absolute and resolves the symlinks of its
// directory, so one file has one entry whichever way it is reached. The
// file's own name is kept: trust binds to its content either way.
func canonicalFile(path string) (string, error) {
	dir, err := canonicalDir(filepath.Dir(path))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(path)), nil
}

// within says whether path is dir or lies below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// TrustFiles records each of paths as trusted with its current content.
// A file that cannot be read is an error, and nothing is recorded.
func TrustFiles(env Env, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	var add []trustedFileEntry
	for _, p := range paths {
		c, err := canonicalFile(p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(c)
		if err != nil {
			return err
		}
		add = append(add, trustedFileEntry{Path: c, SHA256: contentHash(b)})
	}
	t, err := readTrust(env)
	if err != nil {
		return err
	}
	for _, e := range add {
		t.Files = slices.DeleteFunc(t.Files, func(x trustedFileEntry) bool { return x.Path == e.Path })
		t.Files = append(t.Files, e)
	}
	return writeTrust(env, t)
}

// FileTrust says whether the file at path, whose content (as read for
// use) is given, is trusted. An unreadable list trusts nothing.
func FileTrust(env Env, path string, content []byte) TrustState {
	c, err := canonicalFile(path)
	if err != nil {
		return Untrusted
	}
	t, err := readTrust(env)
	if err != nil {
		return Untrusted
	}
	for _, e := range t.Files {
		if e.Path == c {
			if e.SHA256 == contentHash(content) {
				return Trusted
			}
			return Changed
		}
	}
	return Untrusted
}

// TrustedFile is one trusted file, with how it stands now.
type TrustedFile struct {
	Path  string
	State TrustState // Trusted, or Changed (the file differs or is gone)
}

// TrustedFiles lists every trusted file, sorted by path.
func TrustedFiles(env Env) ([]TrustedFile, error) {
	t, err := readTrust(env)
	if err != nil {
		return nil, err
	}
	var out []TrustedFile
	for _, e := range t.Files {
		st := Changed
		if b, err := os.ReadFile(e.Path); err == nil && contentHash(b) == e.SHA256 {
			st = Trusted
		}
		out = append(out, TrustedFile{Path: e.Path, State: st})
	}
	slices.SortFunc(out, func(a, b TrustedFile) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
