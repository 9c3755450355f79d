//go:build corvid_pg

package main

import (
	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/store/pgdriver"
)

// Built with -tags corvid_pg (the corvid-pg binary of a release, or
// `go install -tags corvid_pg .../cmd/corvid`), corvid opens PostgreSQL
// stores itself; the default build hands such commands to corvid-pg
// (pghandoff.go).
func init() { store.RegisterPostgres(pgdriver.Driver{}) }
