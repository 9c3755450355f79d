package store

import "github.com/corvid-agent/corvid/internal/store/pgdriver"

// The store's tests run on PostgreSQL too (backends_test.go): register
// the driver the corvid-pg binary registers.
func init() { RegisterPostgres(pgdriver.Driver{}) }
