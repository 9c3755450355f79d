//go:build unix

package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BinDir is where Debian's postgresql-15 puts initdb, postgres and pg_ctl.
const BinDir = "/usr/lib/postgresql/15/bin"

// Install is the line that installs the server.
const Install = "apt-get install -y postgresql-15"

// Server is a running PostgreSQL server.
type Server struct {
	Dir     string // the data directory's parent, with the socket
	Socket  string // the directory holding the unix socket
	Port    int    // names the socket file (.s.PGSQL.<port>); nothing listens on TCP
	data    string
	cred    *syscall.Credential
	user    string
	n       atomic.Int64
	stopped bool
}

// Missing says why no server can start here ("" when one can).
func Missing() string {
	for _, b := range []string{"initdb", "postgres", "pg_ctl", "psql"} {
		if _, err := os.Stat(filepath.Join(BinDir, b)); err != nil {
			if b == "psql" {
				if _, err := exec.LookPath("psql"); err == nil {
					continue
				}
			}
			return fmt.Sprintf("PostgreSQL 15 is not installed (%s missing); install it with: %s", b, Install)
		}
	}
	return ""
}

// Skip skips t (or fails it under CI=true) when no server can start.
func Skip(t testing.TB) {
	t.Helper()
	if why := Missing(); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
}

// Start initialises and starts a server in a new temporary directory. The
// caller stops it with Stop. It returns an error when the binaries are
// missing (see Missing) or the server does not start.
func Start() (*Server, error) {
	if why := Missing(); why != "" {
		return nil, fmt.Errorf("%s", why)
	}
	dir, err := os.MkdirTemp("", "corvid-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Socket: dir, data: filepath.Join(dir, "data"), Port: 5432 + os.Getpid()%20000}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("tests run as root and there is no postgres user to run the server as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		s.user = "postgres"
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		// The server's user must reach the directory through its parents.
		os.Chmod(dir, 0o755)
	} else {
		cur, err := user.Current()
		if err != nil {
			return nil, err
		}
		s.user = cur.Username
	}
	if out, err := s.run(filepath.Join(BinDir, "initdb"), "-D", s.data, "-U", s.user, "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := s.Restart(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.watch()
	return s, nil
}

// watch starts a watchdog that stops the server and removes its
// directory once this process is gone without calling Stop (a test
// binary killed by its timeout): the server is a daemon of its own.
func (s *Server) watch() {
	script := fmt.Sprintf(`while kill -0 %d 2>/dev/null; do sleep 1; done
pid=$(head -n1 %q/postmaster.pid 2>/dev/null) && kill -QUIT "$pid" 2>/dev/null
sleep 1; rm -rf %q`, os.Getpid(), s.data, s.Dir)
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}

// Restart starts the server (again, after StopServer).
func (s *Server) Restart() error {
	opts := fmt.Sprintf("-c listen_addresses='' -k %s -p %d -c fsync=off -c synchronous_commit=on -c max_connections=300", s.Socket, s.Port)
	if out, err := s.run(filepath.Join(BinDir, "pg_ctl"), "-D", s.data, "-l", filepath.Join(s.Dir, "log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	s.stopped = false
	return nil
}

// StopServer stops the server fast (its connections are cut), keeping
// its data for Restart.
func (s *Server) StopServer() error {
	out, err := s.run(filepath.Join(BinDir, "pg_ctl"), "-D", s.data, "-m", "fast", "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	s.stopped = true
	return nil
}

// Stop stops the server and removes its directory.
func (s *Server) Stop() {
	if !s.stopped {
		s.run(filepath.Join(BinDir, "pg_ctl"), "-D", s.data, "-m", "immediate", "-w", "stop")
	}
	os.RemoveAll(s.Dir)
}

// URL is the postgres:// URL of database db on this server.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://%s@/%s?host=%s&port=%d&sslmode=disable", s.user, db, s.Socket, s.Port)
}

// NewDB creates a fresh database and returns its URL.
func (s *Server) NewDB() (string, error) {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.n.Add(1))
	if out, err := s.Psql("postgres", "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database: %v\n%s", err, out)
	}
	return s.URL(name), nil
}

// Psql runs one SQL command in database db and returns its output.
func (s *Server) Psql(db, sql string) (string, error) {
	psql := filepath.Join(BinDir, "psql")
	if _, err := os.Stat(psql); err != nil {
		psql = "psql"
	}
	return s.run(psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", s.Socket, "-p", strconv.Itoa(s.Port), "-U", s.user, "-d", db, "-c", sql)
}

func (s *Server) run(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}
