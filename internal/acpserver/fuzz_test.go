package acpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/llm/script"
)

// harness is a server on pipes with one live session.
type harness struct {
	in  *io.PipeWriter
	out *bufio.Reader
	sid string
	mu  sync.Mutex
	id  int
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	s, err := script.Parse([]byte(`{"onExhausted":"repeat-last","responses":[{"parts":[{"type":"text","text":"ok"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ag := agent.New(agent.Config{Model: script.NewModel(s, "fuzz"), StorePath: filepath.Join(t.TempDir(), "sessions.db"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Serve(context.Background(), inR, outW, Options{Agent: ag, Version: "fuzz", LaunchDir: t.TempDir(), Stored: true,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		outW.Close()
	}()
	h := &harness{in: inW, out: bufio.NewReaderSize(outR, 1<<20)}
	t.Cleanup(func() {
		// Keep reading, or the server blocks writing its last frames and
		// never returns.
		go func() { _, _ = io.Copy(io.Discard, h.out) }()
		inW.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop after its input closed")
		}
		ag.Close()
	})
	h.call(t, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	var res struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	_ = json.Unmarshal(h.call(t, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir())), &res)
	if res.Result.SessionID == "" {
		t.Fatal("no session")
	}
	h.sid = res.Result.SessionID
	return h
}

// call sends one request and returns its response line, skipping
// notifications. It fails the test on a broken frame or a wrong id.
func (h *harness) call(t testing.TB, method, params string) []byte {
	t.Helper()
	h.mu.Lock()
	h.id++
	id := h.id
	h.mu.Unlock()
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	// One frame is one line: compact valid JSON (params may hold newlines
	// as whitespace), and send anything else as a JSON string.
	var compact bytes.Buffer
	if json.Compact(&compact, []byte(line)) == nil {
		line = compact.String()
	} else {
		quoted, _ := json.Marshal(params)
		line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, quoted)
	}
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	lines := make(chan []byte, 1)
	for {
		go func() {
			b, err := h.out.ReadBytes('\n')
			if err != nil {
				lines <- nil
				return
			}
			lines <- b
		}()
		select {
		case b := <-lines:
			if b == nil {
				t.Fatalf("%s %s: output ended", method, params)
			}
			var m struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("%s %s: bad frame %q", method, params, b)
			}
			if m.Method != "" {
				continue // a notification
			}
			if m.ID == nil || *m.ID != id {
				t.Fatalf("%s %s: response for id %v, want %d: %s", method, params, m.ID, id, b)
			}
			return b
		case <-deadline:
			t.Fatalf("%s %s: no response in 10s", method, params)
		}
	}
}

var fuzzMethods = []string{
	"initialize", "authenticate", "logout", "session/new", "session/load", "session/resume", "session/list",
	"session/close", "session/delete", "session/fork", "session/prompt", "session/set_mode", "session/set_config_option",
}

// FuzzRequestParams sends arbitrary params to every method: each request gets
// exactly one answer, never an internal error (a panic or an unmapped
// failure), and the connection keeps working.
func FuzzRequestParams(f *testing.F) {
	seeds := []string{
		`{}`, `null`, `[]`, `1`, `"x"`, `{"sessionId":"SID"}`, `{"sessionId":1}`,
		`{"sessionId":"SID","prompt":[{"type":"text","text":"hi"}]}`,
		`{"sessionId":"SID","prompt":[{"type":"image","data":"!!","mimeType":"image/png"}]}`,
		`{"sessionId":"SID","prompt":[{"type":"resource","resource":{"uri":"file:///x","blob":"%%"}}]}`,
		`{"sessionId":"SID","prompt":[{"type":"resource_link","uri":"file:///etc/hostname","name":"h"}]}`,
		`{"sessionId":"SID","configId":"mode","value":"plan"}`, `{"sessionId":"SID","configId":"mode","value":true}`,
		`{"sessionId":"SID","configId":"context_window","value":"1"}`, `{"sessionId":"SID","modeId":"yolo"}`,
		`{"cwd":"relative","mcpServers":[]}`, `{"cwd":"/tmp","mcpServers":[{"name":"x","command":""}]}`,
		`{"cursor":"bogus"}`, `{"cwd":"/tmp"}`, `{"methodId":"env:ANTHROPIC_API_KEY"}`,
		`{"protocolVersion":"1.0"}`, `{"protocolVersion":65535,"clientCapabilities":{"fs":true}}`,
		`{"sessionId":"SID","cwd":"/tmp","mcpServers":null,"additionalDirectories":["rel"]}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	h := newHarness(f)
	f.Fuzz(func(t *testing.T, m uint8, params string) {
		method := fuzzMethods[int(m)%len(fuzzMethods)]
		if method == "session/close" || method == "session/delete" {
			params = strings.ReplaceAll(params, "SID", "sess_other") // keep the live session
		}
		params = strings.ReplaceAll(params, "SID", h.sid)
		resp := h.call(t, method, params)
		var r struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(resp, &r); err != nil {
			t.Fatal(err)
		}
		if r.Error != nil && r.Error.Code == -32603 && r.Error.Message == "Internal error" {
			t.Fatalf("%s %s: an unmapped internal error: %s", method, params, resp)
		}
		// Still usable.
		h.call(t, "session/list", `{}`)
	})
}
