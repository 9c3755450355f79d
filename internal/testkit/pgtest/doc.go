// Package pgtest runs a real PostgreSQL 15 server for tests: initdb in a
// temporary directory, a unix socket in it, no TCP, as the postgres user
// when the tests run as root (initdb refuses root). One server serves a
// test process ([Start] in TestMain); each test gets a fresh database
// ([Server.NewDB]). Where the binaries are missing the tests skip with the
// line that installs them, except under CI=true, where they fail.
//
// The server runs on Unix only (tests are Unix-only); elsewhere the package is empty.
package pgtest
