package mcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStderrLine bounds one logged line of a server's stderr.
const maxStderrLine = 16 << 10

// process is a stdio server's child process. It runs in its own process
// group, so that Close can end it together with anything it started.
//
// The go-sdk's CommandTransport starts the command and reaps it (its
// connection's Close waits for the process), so process never calls Wait;
// it reads cmd.ProcessState only once the session is known to be over.
type process struct {
	server string
	cmd    *exec.Cmd
	log    *slog.Logger

	stderrR, stderrW *os.File
	stderrDone       chan struct{}

	mu        sync.Mutex
	connected bool // the transport tried to start the command
	pidValue  int
	lastLine  string // the last non-empty stderr line, for failure messages
}

func newProcess(s Server, dir string, log *slog.Logger) (*process, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for _, e := range s.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// An *os.File is handed to the child as is: no copying goroutine that
	// Wait would have to wait for while a grandchild holds stderr open.
	cmd.Stderr = w
	return &process{server: s.Name, cmd: cmd, log: log, stderrR: r, stderrW: w, stderrDone: make(chan struct{})}, nil
}

// transport wraps the go-sdk's CommandTransport to learn the pid as soon as
// the process started and to begin reading its stderr.
func (p *process) transport(terminate time.Duration) sdk.Transport {
	return &stdioTransport{inner: &sdk.CommandTransport{Command: p.cmd, TerminateDuration: terminate}, p: p}
}

type stdioTransport struct {
	inner *sdk.CommandTransport
	p     *process
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	t.p.started()
	return c, err
}

// started runs once the command was started (or failed to start).
func (p *process) started() {
	p.mu.Lock()
	p.connected = true
	p.mu.Unlock()
	p.stderrW.Close() // the child holds its own copy
	if p.cmd.Process == nil {
		p.stderrR.Close()
		close(p.stderrDone)
		return
	}
	p.mu.Lock()
	p.pidValue = p.cmd.Process.Pid
	p.mu.Unlock()
	go p.readStderr()
}

// abandon releases the pipe if the transport was never connected.
func (p *process) abandon() {
	p.mu.Lock()
	connected := p.connected
	p.connected = true
	p.mu.Unlock()
	if !connected {
		p.stderrW.Close()
		p.stderrR.Close()
		close(p.stderrDone)
	}
}

func (p *process) readStderr() {
	defer close(p.stderrDone)
	defer p.stderrR.Close()
	br := bufio.NewReaderSize(p.stderrR, 4096)
	for {
		line, err := readLine(br, maxStderrLine)
		if line != "" {
			p.log.Info("mcp server stderr", "server", p.server, "line", line)
			p.mu.Lock()
			p.lastLine = line
			p.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line without its line ending, keeping at most max
// bytes of it.
func readLine(br *bufio.Reader, max int) (string, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf) < max {
			buf = append(buf, chunk[:min(len(chunk), max-len(buf))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		for len(buf) > 0 && (buf[len(buf)-1] == '\n' || buf[len(buf)-1] == '\r') {
			buf = buf[:len(buf)-1]
		}
		if err == io.EOF && len(buf) > 0 {
			err = nil // return the last line now, EOF on the next call
		}
		return string(buf), err
	}
}

func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pidValue
}

// lastStderr waits briefly for the stderr reader to drain (the process
// has exited or been killed) and returns the last line it saw.
func (p *process) lastStderr(wait time.Duration) string {
	select {
	case <-p.stderrDone:
	case <-time.After(wait):
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastLine
}

// signalGroup sends sig to the whole process group.
func (p *process) signalGroup(sig syscall.Signal) {
	if pid := p.pid(); pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// exitText describes how the process ended, e.g. "exit status 3". Only
// call it once the session is over, when the go-sdk has reaped the process.
func (p *process) exitText() string {
	if st := p.cmd.ProcessState; st != nil {
		return st.String()
	}
	return ""
}

// exitTextAfter is exitText if done (the session's end) is closed, else "".
func (p *process) exitTextAfter(done <-chan struct{}) string {
	select {
	case <-done:
		return p.exitText()
	default:
		return ""
	}
}
