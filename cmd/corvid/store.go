package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/store"
)

// storeFlag is the --store flag of every command that opens the session
// store (acp, run, sessions ...).
type storeFlag struct {
	Store string `name:"store" placeholder:"URL" help:"Session store: sqlite:PATH (a SQLite file) or postgres://USER@HOST/DB (a PostgreSQL database shared by several machines). Default: CORVID_STORE, store in the user config, else the SQLite file in the data directory."`
}

// target resolves the store (flag, CORVID_STORE, config, default).
func (f storeFlag) target(env config.Env, file *config.File) (string, error) {
	var fc config.File
	if file != nil {
		fc = *file
	}
	return config.SessionStore(env, f.Store, fc)
}

// checkStore opens a PostgreSQL store once at start-up, so that a URL
// that cannot be reached or credentials refused end the command with an
// error naming the URL (without its password) and exit 1, instead of
// failing the first session later. A SQLite file is opened lazily as
// before (start-up stays fast).
func checkStore(target string) error {
	if !store.IsPostgres(target) {
		return nil
	}
	st, err := store.Open(target)
	if err != nil {
		return err
	}
	return st.Close()
}

// exitStoreError prints err and exits 1.
func exitStoreError(err error) {
	fmt.Fprintln(os.Stderr, "corvid:", err)
	os.Exit(1)
}

// openStoreTarget opens target for a command that only reads, or returns
// nil when it is a SQLite file that does not exist yet (reading must not
// create it).
func openStoreTarget(target string) (*store.Store, error) {
	if !store.IsPostgres(target) {
		if _, err := os.Stat(target); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
	}
	return store.Open(target)
}
