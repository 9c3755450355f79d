package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/corvid-agent/corvid/internal/store"
)

// The PostgreSQL store's driver (pgx) is not linked into the default
// corvid: its package init and pages would cost every start of `corvid
// acp` more than its budgets allow, PostgreSQL or not (docs/store.md).
// The release ships a second binary, corvid-pg: this package built with
// the corvid_pg tag (postgres.go), which registers the driver. A default
// corvid whose store resolves to a postgres:// URL hands the whole
// command to corvid-pg, found beside it then on PATH as corvid-tui is,
// with the same arguments and environment: on Unix it replaces itself
// (the pid, stdio and signals stay the editor's); elsewhere it runs
// corvid-pg and exits with its status.

// pgHandoffEnv marks a process that a default corvid handed to
// corvid-pg: a corvid-pg without the driver (a default build copied under
// that name) then fails instead of handing the command on forever. As a
// CORVID_* variable, no child of corvid inherits it.
const pgHandoffEnv = "CORVID_PG_HANDOFF"

// pgInstallHint says how to get a corvid that opens PostgreSQL stores.
const pgInstallHint = "install corvid-pg from the same release archive as corvid, " +
	"or build corvid with PostgreSQL: go install -tags corvid_pg github.com/corvid-agent/corvid/cmd/corvid@latest"

// protocolStdout is the stdout claimStdout kept for the protocol (nil
// until it runs), which a hand-off gives back to fd 1.
var protocolStdout *os.File

// handOffPostgres hands this command to corvid-pg when target is a
// PostgreSQL store that this binary cannot open; it returns only when
// target needs no hand-off (nil), or with an error naming what is missing
// and how to install it. Call it before the command reads stdin, serves
// or changes the process environment: corvid-pg starts the command over.
func handOffPostgres(target string) error {
	if !store.IsPostgres(target) || store.HasPostgres() {
		return nil
	}
	shown := store.Redact(target)
	if os.Getenv(pgHandoffEnv) != "" {
		return fmt.Errorf("the session store %s is PostgreSQL, and this corvid-pg was built without PostgreSQL support: %s", shown, pgInstallHint)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("the session store %s is PostgreSQL, which corvid-pg opens; find corvid's own executable: %w", shown, err)
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	pg, ok := findBeside(self, "corvid-pg")
	if !ok {
		return fmt.Errorf("the session store %s is PostgreSQL, which this corvid opens through corvid-pg, and corvid-pg is not installed beside %s or on PATH: %s", shown, self, pgInstallHint)
	}
	return handOff(pg, os.Args[1:], append(os.Environ(), pgHandoffEnv+"=1"))
}
