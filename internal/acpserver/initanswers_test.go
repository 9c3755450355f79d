package acpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/llm/script"
)

func answersOptions(t *testing.T, version string, hub *Hub) Options {
	t.Helper()
	s, err := script.Parse([]byte(`{"responses":[{"parts":[{"type":"text","text":"ok"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ag := agent.New(agent.Config{Model: script.NewModel(s, "t"), StorePath: filepath.Join(t.TempDir(), "s.db"), Logger: quiet})
	t.Cleanup(func() { _ = ag.Close() })
	return Options{Agent: ag, Version: version, Hub: hub, Stored: true, Logger: quiet}
}

// readAnswers parses a published file the way the relay reads it: the
// index, then each key's bytes at its offset.
func readAnswers(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok || string(head) != InitAnswersHeader {
		t.Fatalf("header %q", head)
	}
	index, _, ok := bytes.Cut(rest, []byte("\n\n"))
	if !ok {
		t.Fatal("no end of index")
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(index), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("index line %q", line)
		}
		off, _ := strconv.Atoi(f[1])
		n, _ := strconv.Atoi(f[2])
		if off+n >= len(b) || b[off+n] != '\n' {
			t.Fatalf("%s: %d+%d is not an answer's end", f[0], off, n)
		}
		out[f[0]] = string(b[off : off+n])
	}
	return out
}

// TestPublishedAnswersAreTheConnectionsAnswers: for every key, the file
// holds exactly the bytes a connection's initialize writes as its result.
func TestPublishedAnswersAreTheConnectionsAnswers(t *testing.T) {
	hub := NewHub()
	opts := answersOptions(t, "9.9.9", hub)
	path := filepath.Join(t.TempDir(), "s.sock"+InitAnswersSuffix)
	if err := hub.PublishInitialize(opts, path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", st, err)
	}
	got := readAnswers(t, path)
	if len(got) != 20 {
		t.Fatalf("%d keys, want 20", len(got))
	}
	for _, params := range []string{
		`{"protocolVersion":1}`,
		`{"protocolVersion":1,"clientCapabilities":{"auth":{"terminal":true}}}`,
		`{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true},"terminal":true,"_meta":{"corvid.dev/sessionsChanged":true}}}`,
		`{"protocolVersion":1,"_meta":{"corvid.dev/dialect":"codebuddy"}}`,
		`{"protocolVersion":1,"_meta":{"corvid.dev/dialect":"acp"},"clientCapabilities":{"auth":{"terminal":true},"_meta":{"corvid.dev/sessionsChanged":true}}}`,
		`{"protocolVersion":1,"_meta":{"corvid.dev/dialect":"gascity"}}`,
		`{"protocolVersion":1,"_meta":{"corvid.dev/dialect":"default"}}`,
	} {
		var req acp.InitializeRequest
		if err := unmarshalString(params, &req); err != nil {
			t.Fatal(err)
		}
		key, ok := InitializeKey(&req)
		if !ok {
			t.Fatalf("%s: no key", params)
		}
		s := &Server{opts: opts, log: opts.Logger}
		resp, err := s.Initialize(context.Background(), &req)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := resp.MarshalJSON()
		if got[key] != string(want) {
			t.Errorf("%s: key %s\n file: %.200s\n conn: %.200s", params, key, got[key], want)
		}
	}
	var req acp.InitializeRequest
	_ = unmarshalString(`{"_meta":{"corvid.dev/dialect":"zed"}}`, &req)
	if _, ok := InitializeKey(&req); ok {
		t.Error("a dialect the file does not list has a key")
	}
	hub.Unpublish()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("Unpublish left the file: %v", err)
	}
}

// TestChangedAnswerIsPublishedBeforeItIsGiven: a connection whose answer
// differs from the published one (new options since: a reload, another
// model) publishes the new answers before Initialize returns.
func TestChangedAnswerIsPublishedBeforeItIsGiven(t *testing.T) {
	hub := NewHub()
	path := filepath.Join(t.TempDir(), "s.sock"+InitAnswersSuffix)
	if err := hub.PublishInitialize(answersOptions(t, "1.0.0", hub), path); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readAnswers(t, path)[",0,0"], `"version":"1.0.0"`) {
		t.Fatal("first answers lack version 1.0.0")
	}
	later := answersOptions(t, "2.0.0", hub)
	s := &Server{opts: later, log: later.Logger}
	if _, err := s.Initialize(context.Background(), &acp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	for k, a := range readAnswers(t, path) {
		if !strings.Contains(a, `"version":"2.0.0"`) {
			t.Errorf("%s still answers %.120s", k, a)
		}
	}
}

func unmarshalString(s string, v any) error { return json.Unmarshal([]byte(s), v) }
