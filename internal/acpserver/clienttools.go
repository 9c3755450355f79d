package acpserver

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/tool"
)

// Where tools run (ARCHITECTURE.md §3): with ClientTools "auto", file reads and
// writes go through the client's fs/* methods and shell through its
// terminal/* methods, each only when the client advertised it as true;
// everything else runs in-process. corvid never calls a client method the
// client did not advertise.

// clientFS routes reads and/or writes to the client, the rest to disk.
type clientFS struct {
	conn      *acp.Conn
	sessionID string
	read      bool // client serves fs/read_text_file
	write     bool // client serves fs/write_text_file
	local     tool.LocalFS
	// useLocal, once true, sends everything to disk (a client that turned
	// out never to answer; see gascity.go).
	useLocal func() bool
}

func (c *clientFS) ReadTextFile(ctx context.Context, path string) (string, error) {
	if !c.read || c.useLocal() {
		return c.local.ReadTextFile(ctx, path)
	}
	var resp acp.ReadTextFileResponse
	err := c.conn.Call(ctx, "fs/read_text_file", acp.ReadTextFileRequest{SessionID: c.sessionID, Path: path}, &resp)
	if err != nil {
		if e, ok := acp.AsError(err); ok && e.Code == acp.CodeResourceNotFound {
			return "", fmt.Errorf("%s: %w", path, fs.ErrNotExist)
		}
		// Editors differ in how they report a missing file; when the disk
		// agrees that it does not exist, say so plainly.
		if _, statErr := c.local.ReadTextFile(ctx, path); statErr != nil {
			return "", statErr
		}
		return "", fmt.Errorf("the editor could not read %s: %w", path, err)
	}
	return resp.Content, nil
}

// ReadsDisk reports whether reads go to the local disk (the client does not
// serve them), so read may page a file there instead of loading it whole.
func (c *clientFS) ReadsDisk() bool { return !c.read || c.useLocal() }

func (c *clientFS) WriteTextFile(ctx context.Context, path, content string) error {
	if !c.write || c.useLocal() {
		return c.local.WriteTextFile(ctx, path, content)
	}
	if err := c.conn.Call(ctx, "fs/write_text_file", acp.WriteTextFileRequest{SessionID: c.sessionID, Path: path, Content: content}, nil); err != nil {
		return fmt.Errorf("the editor could not write %s: %w", path, err)
	}
	return nil
}

// WriteTarget writes the target a permission question showed: on disk,
// atomically and refusing a changed target, unless the client serves writes.
func (c *clientFS) WriteTarget(ctx context.Context, t tool.Target, content string) error {
	if !c.write {
		return c.local.WriteTarget(ctx, t, content)
	}
	return c.WriteTextFile(ctx, t.Path, content)
}

// clientTerminals runs commands in the client's terminals.
type clientTerminals struct {
	conn      *acp.Conn
	sessionID string
}

func (c *clientTerminals) Embedded() bool { return true }

func (c *clientTerminals) Create(ctx context.Context, req tool.TerminalRequest) (string, error) {
	r := acp.CreateTerminalRequest{SessionID: c.sessionID, Command: req.Command, Args: req.Args, Cwd: req.Cwd}
	for _, e := range req.Env {
		r.Env = append(r.Env, acp.NameValue{Name: e.Name, Value: e.Value})
	}
	if req.OutputByteLimit > 0 {
		n := int64(req.OutputByteLimit)
		r.OutputByteLimit = &n
	}
	var resp acp.CreateTerminalResponse
	if err := c.conn.Call(ctx, "terminal/create", r, &resp); err != nil {
		return "", err
	}
	return resp.TerminalID, nil
}

func (c *clientTerminals) Output(ctx context.Context, id string) (tool.TerminalOutput, error) {
	var resp acp.TerminalOutputResponse
	if err := c.conn.Call(ctx, "terminal/output", acp.TerminalRequest{SessionID: c.sessionID, TerminalID: id}, &resp); err != nil {
		return tool.TerminalOutput{}, err
	}
	out := tool.TerminalOutput{Output: resp.Output, Truncated: resp.Truncated}
	if resp.ExitStatus != nil {
		out.Exit = &tool.ExitStatus{ExitCode: resp.ExitStatus.ExitCode, Signal: resp.ExitStatus.Signal}
	}
	return out, nil
}

func (c *clientTerminals) WaitForExit(ctx context.Context, id string) (tool.ExitStatus, error) {
	var resp acp.TerminalExitStatus
	if err := c.conn.Call(ctx, "terminal/wait_for_exit", acp.TerminalRequest{SessionID: c.sessionID, TerminalID: id}, &resp); err != nil {
		return tool.ExitStatus{}, err
	}
	return tool.ExitStatus{ExitCode: resp.ExitCode, Signal: resp.Signal}, nil
}

func (c *clientTerminals) Kill(ctx context.Context, id string) error {
	return c.conn.Call(ctx, "terminal/kill", acp.TerminalRequest{SessionID: c.sessionID, TerminalID: id}, nil)
}

func (c *clientTerminals) Release(ctx context.Context, id string) error {
	return c.conn.Call(ctx, "terminal/release", acp.TerminalRequest{SessionID: c.sessionID, TerminalID: id}, nil)
}

// toolBackends picks the session's file system and terminals for the
// client's capabilities.
func (s *Server) toolBackends(sessionID string) (tool.FS, tool.Terminals) {
	s.mu.Lock()
	caps := s.clientCaps
	s.mu.Unlock()
	var fsys tool.FS = tool.LocalFS{}
	var terms tool.Terminals = tool.NewLocalTerminals()
	if s.opts.ClientTools == "never" || caps == nil {
		return fsys, terms
	}
	if caps.FS.ReadTextFile || caps.FS.WriteTextFile {
		fsys = &clientFS{conn: s.conn, sessionID: sessionID, read: caps.FS.ReadTextFile, write: caps.FS.WriteTextFile, useLocal: s.toolsOnDisk}
	}
	if caps.Terminal {
		terms = &switchTerminals{client: &clientTerminals{conn: s.conn, sessionID: sessionID}, local: tool.NewLocalTerminals(), useLocal: s.toolsOnDisk, localIDs: map[string]bool{}}
	}
	return fsys, terms
}

// toolsOnDisk says the session's files and commands go to disk from now
// on, although this connection's client advertised fs or terminal: a host
// that prompts with messages (gascity.go), or a client that went away
// while the session lives on in the daemon with other clients attached
// (serve: their capabilities are their own, so nothing goes to them).
func (s *Server) toolsOnDisk() bool {
	if s.messagesHost.Load() {
		return true
	}
	select {
	case <-s.conn.Gone():
		return true
	default:
		return false
	}
}
