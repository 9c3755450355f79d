package testkit

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// fsOverlay is the editor's open buffers: path → unsaved content, over the disk.
type fsOverlay struct {
	mu   sync.Mutex
	bufs map[string]string
}

func (o *fsOverlay) init() { o.bufs = map[string]string{} }

// FSCall records one fs/* request from the agent.
type FSCall struct {
	Method    string // fs/read_text_file or fs/write_text_file
	SessionID string
	Path      string
	Line      int    // read: 1-based first line, 0 if absent
	Limit     int    // read: max lines, 0 if absent
	Content   string // write: the content written; read: the content returned
	Error     *RPCError
}

// SetBuffer puts unsaved content for path in the editor; fs/read_text_file returns it
// instead of the file on disk.
func (e *Editor) SetBuffer(path, content string) {
	e.fs.mu.Lock()
	defer e.fs.mu.Unlock()
	e.fs.bufs[path] = content
}

// Buffer returns the editor's content for path, if it has a buffer for it.
func (e *Editor) Buffer(path string) (string, bool) {
	e.fs.mu.Lock()
	defer e.fs.mu.Unlock()
	s, ok := e.fs.bufs[path]
	return s, ok
}

// FSCalls returns every fs/* request so far.
func (e *Editor) FSCalls() []FSCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]FSCall(nil), e.fsCalls...)
}

func (e *Editor) recordFS(c FSCall) {
	e.mu.Lock()
	e.fsCalls = append(e.fsCalls, c)
	e.broadcastLocked()
	e.mu.Unlock()
}

func (e *Editor) serveRead(m Message) (any, *RPCError) {
	var p struct {
		SessionID string `json:"sessionId"`
		Path      string `json:"path"`
		Line      *int   `json:"line"`
		Limit     *int   `json:"limit"`
	}
	_ = json.Unmarshal(m.Params, &p)
	call := FSCall{Method: m.Method, SessionID: p.SessionID, Path: p.Path}
	if p.Line != nil {
		call.Line = *p.Line
	}
	if p.Limit != nil {
		call.Limit = *p.Limit
	}
	content, rerr := e.readText(p.Path)
	if rerr == nil {
		content = sliceLines(content, call.Line, call.Limit)
	}
	call.Content, call.Error = content, rerr
	e.recordFS(call)
	if rerr != nil {
		return nil, rerr
	}
	return map[string]any{"content": content}, nil
}

func (e *Editor) readText(path string) (string, *RPCError) {
	if !filepath.IsAbs(path) {
		e.t.Errorf("testkit: agent sent a relative path %q to fs/read_text_file (paths must be absolute)", path)
		return "", &RPCError{Code: CodeInvalidParams, Message: "Invalid params", Data: json.RawMessage(`{"details":"path must be absolute"}`)}
	}
	if s, ok := e.Buffer(path); ok {
		return s, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		data, _ := json.Marshal(map[string]string{"uri": "file://" + path})
		return "", &RPCError{Code: CodeResourceNotFound, Message: "Resource not found", Data: data}
	}
	if err != nil {
		return "", &RPCError{Code: CodeInternalError, Message: "Internal error", Data: mustJSON(err.Error())}
	}
	return string(b), nil
}

// sliceLines returns limit lines of s starting at the 1-based line (0 = whole file).
func sliceLines(s string, line, limit int) string {
	if line <= 1 && limit <= 0 {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	start := max(line-1, 0)
	if start >= len(lines) {
		return ""
	}
	end := len(lines)
	if limit > 0 && start+limit < end {
		end = start + limit
	}
	return strings.Join(lines[start:end], "")
}

func (e *Editor) serveWrite(m Message) (any, *RPCError) {
	var p struct {
		SessionID string `json:"sessionId"`
		Path      string `json:"path"`
		Content   string `json:"content"`
	}
	_ = json.Unmarshal(m.Params, &p)
	call := FSCall{Method: m.Method, SessionID: p.SessionID, Path: p.Path, Content: p.Content}
	if !filepath.IsAbs(p.Path) {
		e.t.Errorf("testkit: agent sent a relative path %q to fs/write_text_file (paths must be absolute)", p.Path)
		call.Error = &RPCError{Code: CodeInvalidParams, Message: "Invalid params", Data: json.RawMessage(`{"details":"path must be absolute"}`)}
		e.recordFS(call)
		return nil, call.Error
	}
	e.SetBuffer(p.Path, p.Content)
	if !e.opts.KeepWritesInMemory {
		err := os.MkdirAll(filepath.Dir(p.Path), 0o755)
		if err == nil {
			err = os.WriteFile(p.Path, []byte(p.Content), 0o644)
		}
		if err != nil {
			call.Error = &RPCError{Code: CodeInternalError, Message: "Internal error", Data: mustJSON(err.Error())}
		}
	}
	e.recordFS(call)
	if call.Error != nil {
		return nil, call.Error
	}
	return map[string]any{}, nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
