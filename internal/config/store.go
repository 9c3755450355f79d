package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// StoreSource says where a session store choice came from.
type StoreSource string

// SessionStore is the session store every command that opens one uses:
// the --store flag (flag), else CORVID_STORE, else the user config's
// store key, else the SQLite file DataDir/sessions.db. A choice is
// "sqlite:PATH" (a SQLite file; PATH may be relative to the working
// directory) or a postgres:// (postgresql://) URL; the result is a path
// or a URL, as store.Open takes it. Anything else is an error naming
// where it came from.
func SessionStore(env Env, flag string, file File) (string, error) {
	for _, c := range []struct{ v, from string }{
		{flag, "--store"},
		{env.Getenv("CORVID_STORE"), "CORVID_STORE"},
		{file.Store, "store in " + file.UserPath},
	} {
		v := strings.TrimSpace(c.v)
		if v == "" {
			continue
		}
		switch {
		case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
			return v, nil
		case strings.HasPrefix(v, "sqlite:"):
			p := strings.TrimPrefix(v, "sqlite:")
			if p == "" {
				return "", fmt.Errorf("%s: sqlite: needs a file path, e.g. sqlite:/var/lib/corvid/sessions.db", c.from)
			}
			abs, err := filepath.Abs(p)
			if err != nil {
				return "", fmt.Errorf("%s: %w", c.from, err)
			}
			return abs, nil
		default:
			return "", fmt.Errorf("%s: %q is not a session store; use sqlite:PATH or postgres://USER@HOST/DB", c.from, redactStore(v))
		}
	}
	return DefaultStorePath(env), nil
}

// DefaultStorePath is the SQLite file used when nothing chooses a store.
func DefaultStorePath(env Env) string {
	return filepath.Join(DataDir(env), "sessions.db")
}

// redactStore cuts what may be a password out of an unrecognised store
// value before it is shown: everything between "//" and "@".
func redactStore(v string) string {
	if i := strings.Index(v, "//"); i >= 0 {
		if j := strings.LastIndex(v, "@"); j > i {
			return v[:i+2] + "…" + v[j:]
		}
	}
	return v
}
