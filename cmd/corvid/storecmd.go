package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/store"
)

// storeCmd manages session stores as wholes.
type storeCmd struct {
	Migrate storeMigrateCmd `cmd:"" help:"Copy every session and event from one session store to another (for example from the SQLite file to PostgreSQL); safe to run again, and an interrupted run resumes."`
}

type storeMigrateCmd struct {
	From string `name:"from" required:"" placeholder:"STORE" help:"Source store: sqlite:PATH or postgres://USER@HOST/DB."`
	To   string `name:"to" required:"" placeholder:"STORE" help:"Destination store: postgres://USER@HOST/DB or sqlite:PATH."`
}

func (c *storeMigrateCmd) Run() error {
	return runStoreMigrate(config.OSEnv{}, *c, os.Stdout)
}

func runStoreMigrate(env config.Env, c storeMigrateCmd, w io.Writer) error {
	from, err := config.SessionStore(env, c.From, config.File{})
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	to, err := config.SessionStore(env, c.To, config.File{})
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	for _, t := range []string{from, to} {
		if err := handOffPostgres(t); err != nil {
			return err
		}
	}
	if from == to {
		return errors.New("--from and --to name the same store")
	}
	if !store.IsPostgres(from) {
		if _, err := os.Stat(from); err != nil {
			return fmt.Errorf("--from: %w", err)
		}
	}
	src, err := store.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := store.Open(to)
	if err != nil {
		return err
	}
	defer dst.Close()
	fmt.Fprintf(w, "Copying sessions from %s to %s\n", store.Redact(from), store.Redact(to))
	rep, err := store.Copy(context.Background(), src, dst, nil)
	if err != nil {
		return fmt.Errorf("migrate stopped (run it again to resume): %w", err)
	}
	fmt.Fprintf(w, "Copied %d events, created %d of %d sessions (the rest were there already).\n", rep.CopiedEvents, rep.NewSessions, rep.Sessions)
	if len(rep.Mismatched) > 0 {
		return fmt.Errorf("verification failed: %d sessions differ between the stores (first: %s); source hash %s, destination hash %s",
			len(rep.Mismatched), rep.Mismatched[0], rep.SourceHash, rep.DestHash)
	}
	fmt.Fprintf(w, "Verified: %d sessions and %d events in both stores, content hashes match (sha256 %s).\n", rep.Sessions, rep.Events, rep.SourceHash)
	return nil
}
