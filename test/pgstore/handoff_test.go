package pgstore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// The default corvid links no PostgreSQL driver; given a PostgreSQL
// store it replaces itself with the corvid-pg beside it (the same pid,
// stdio and arguments), which opens the store: a session created
// through it is in the database.
func TestDefaultCorvidACPReachesPostgresThroughCorvidPG(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := testkit.WriteScript(t, map[string]any{"responses": []any{map[string]any{"parts": []any{map[string]any{"type": "text", "text": "ok"}}}}})
	m := start(t, script, workspace, []string{"--store", url})
	checkExe(t, m.PID(), "corvid-pg")
	sid := m.NewSession(m.ctx, workspace)
	m.MustCall(m.ctx, "session/prompt", testkit.TextPrompt(sid, "hello"), nil)
	listedIn(t, url, sid)
}

// corvid serve on a PostgreSQL store goes through the same hand-off: a
// session made over its socket is in the database.
func TestDefaultCorvidServeReachesPostgresThroughCorvidPG(t *testing.T) {
	url := database(t)
	bin := testkit.BuildCorvidPG(t)
	dir, err := os.MkdirTemp("", "pgserve")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	script := testkit.WriteScript(t, map[string]any{"responses": []any{map[string]any{"parts": []any{map[string]any{"type": "text", "text": "ok"}}}}})
	cmd := exec.Command(bin, "serve", "--listen", "unix:"+sock, "-m", "script:"+script, "--store", url)
	cmd.Env = append(os.Environ(), "CORVID_HOME="+filepath.Join(dir, "home"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var conn net.Conn
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if conn, err = net.Dial("unix", sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("corvid serve --store URL never listened on %s:\n%s", sock, stderr.String())
		}
	}
	defer conn.Close()
	checkExe(t, cmd.Process.Pid, "corvid-pg")
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	sc := bufio.NewScanner(conn)
	sc.Buffer(nil, 1<<24)
	call := func(id int, method string, params any) map[string]any {
		t.Helper()
		if err := json.NewEncoder(conn).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result map[string]any  `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || *m.ID != id || m.Method != "" {
				continue
			}
			if m.Error != nil {
				t.Fatalf("%s: %s\n%s", method, m.Error, stderr.String())
			}
			return m.Result
		}
		t.Fatalf("%s: no answer (%v)\n%s", method, sc.Err(), stderr.String())
		return nil
	}
	call(1, "initialize", testkit.Minimal())
	sid, _ := call(2, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})["sessionId"].(string)
	if sid == "" {
		t.Fatal("session/new gave no sessionId")
	}
	call(3, "session/prompt", testkit.TextPrompt(sid, "hello"))
	listedIn(t, url, sid)
}

// Every command that opens a store, in a default corvid without
// corvid-pg beside it or on PATH, exits 1 naming what is missing and how
// to install it, and never the password. No server is needed: nothing
// is dialled.
func TestDefaultCorvidWithoutCorvidPGExits1(t *testing.T) {
	def := testkit.BuildCorvid(t)
	dir := t.TempDir()
	lone := filepath.Join(dir, "corvid")
	b, err := os.ReadFile(def)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	const url = "postgres://u:hunter2@127.0.0.1:1/db"
	for _, args := range [][]string{
		{"acp", "--store", url},
		{"serve", "--listen", "127.0.0.1:0", "--store", url},
		{"run", "-p", "hi", "--store", url},
		{"sessions", "list", "--store", url},
		{"store", "migrate", "--from", "sqlite:" + filepath.Join(dir, "x.db"), "--to", url},
		{"doctor"}, // its store is CORVID_STORE's
	} {
		cmd := exec.Command(lone, args...)
		cmd.Env = []string{"PATH=" + t.TempDir(), "HOME=" + dir, "CORVID_HOME=" + filepath.Join(dir, "home"), "CORVID_KEYRING=off"}
		if args[0] == "doctor" {
			cmd.Env = append(cmd.Env, "CORVID_STORE="+url)
		}
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		code := -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
		msg := string(out)
		if code != 1 || !strings.Contains(msg, "corvid-pg is not installed beside "+lone+" or on PATH") ||
			!strings.Contains(msg, "go install -tags corvid_pg github.com/corvid-agent/corvid/cmd/corvid") ||
			strings.Contains(msg, "hunter2") {
			t.Errorf("corvid %s: exit %d (%v)\n%s\nwant exit 1 naming corvid-pg and how to install it, without the password", strings.Join(args, " "), code, err, msg)
		}
	}
}

// corvid-pg (built with -tags corvid_pg) opens PostgreSQL itself: alone,
// with nothing to hand off to, it serves a session on the store.
func TestCorvidPGOpensPostgresItself(t *testing.T) {
	url := database(t)
	pg := filepath.Join(filepath.Dir(testkit.BuildCorvidPG(t)), "corvid-pg")
	dir := t.TempDir()
	lone := filepath.Join(dir, "corvid-pg")
	b, err := os.ReadFile(pg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	script := testkit.WriteScript(t, map[string]any{"responses": []any{map[string]any{"parts": []any{map[string]any{"type": "text", "text": "ok"}}}}})
	e := testkit.Start(t, lone, testkit.Options{
		Args: []string{"acp", "-m", "script:" + script, "--store", url},
		Dir:  dir,
		Env:  []string{"CORVID_HOME=" + t.TempDir(), "PATH=" + t.TempDir()},
	})
	ctx := t.Context()
	if _, rerr := e.Initialize(ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v\n%s", rerr, e.Stderr())
	}
	sid := e.NewSession(ctx, dir)
	listedIn(t, url, sid)
}

// checkExe checks, where /proc tells, that process pid runs the program
// named name.
func checkExe(t *testing.T, pid int, name string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(exe) != name {
		t.Errorf("process %d runs %s, want %s", pid, exe, name)
	}
}

// listedIn checks that corvid sessions list on another home lists sid in
// the store url.
func listedIn(t *testing.T, url, sid string) {
	t.Helper()
	cmd := exec.Command(testkit.BuildCorvidPG(t), "sessions", "list", "--all", "--store", url)
	cmd.Env = append(os.Environ(), "CORVID_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), sid) {
		t.Errorf("corvid sessions list --store URL = %v\n%s\nwant session %s", err, out, sid)
	}
}
