package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/tool"
)

// serverBin is the test stdio server, built once by TestMain.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "corvid-mcp-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "stdioserver")
	cmd := exec.Command("go", "build", "-o", serverBin, "./testdata/stdioserver")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the test server:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func stdioServer(name string, args ...string) Server {
	return Server{Name: name, Command: serverBin, Args: args}
}

// start starts servers and closes the manager when the test ends.
func start(t *testing.T, servers []Server, opts Options) (*Manager, []Failure) {
	t.Helper()
	m, failures := Start(context.Background(), servers, opts)
	t.Cleanup(func() { m.Close() })
	return m, failures
}

// startOK starts servers that must all start.
func startOK(t *testing.T, servers []Server, opts Options) *Manager {
	t.Helper()
	m, failures := start(t, servers, opts)
	for _, f := range failures {
		t.Fatalf("server %s: %v", f.Server, f.Err)
	}
	return m
}

func findTool(t *testing.T, m *Manager, name string) tool.Tool {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %q among %v", name, toolNames(m))
	return nil
}

func toolNames(m *Manager) []string {
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Name())
	}
	return names
}

func run(t *testing.T, tl tool.Tool, input string) tool.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := tl.Run(ctx, &tool.Env{Images: true}, tool.Call{ID: "1", Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("%s: Go error %v", tl.Name(), err)
	}
	return res
}

// signal counts calls and lets a test wait for the next one.
type signal struct {
	mu sync.Mutex
	n  int
	ch chan struct{}
}

func newSignal() *signal { return &signal{ch: make(chan struct{}, 100)} }

func (s *signal) fire() {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

func (s *signal) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-s.ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// logRecorder is a slog handler that keeps every message with its attrs.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	r.mu.Lock()
	r.lines = append(r.lines, b.String())
	r.mu.Unlock()
	return nil
}
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

func (r *logRecorder) has(sub string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// fromSDK decodes what the go-sdk encodes for v into corvid's own type T:
// the SDK is the oracle of the wire form.
func fromSDK[T any](t *testing.T, v any) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("the go-sdk cannot encode %T: %v", v, err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("decoding the go-sdk's %T (%s): %v", v, b, err)
	}
	return out
}
