package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// maxStderrLine bounds one logged line of a server's stderr (and of a
// stdout line that is not a JSON-RPC message).
const maxStderrLine = 16 << 10

// maxMessage bounds one JSON-RPC message read from a server's stdout (the
// go-sdk's transport has the same bound).
const maxMessage = 16 << 20

// process is a stdio server's child process. It runs in its own process
// group, so that Close can end it together with anything it started.
//
// corvid starts and reaps the process itself: it learns at once when the server dies, even while
// idle, and it reads stdout through a filter that drops lines which are
// not JSON-RPC messages (a start-up banner) instead of failing the session.
type process struct {
	server string
	cmd    *exec.Cmd
	log    *slog.Logger

	stdin  *os.File // the write end of the server's stdin
	stdout *os.File // the read end of the server's stdout

	exited     chan struct{} // closed once the process was reaped
	stderrDone chan struct{}

	mu       sync.Mutex
	state    *os.ProcessState
	lastLine string // the last non-empty stderr line, for failure messages
}

// startProcess starts s's command. Its stdio are plain pipes handed to the
// child as they are: no copying goroutine that Wait would wait for while a
// grandchild holds one open.
func startProcess(s Server, dir string, log *slog.Logger) (*process, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for _, e := range s.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	inOwnGroup(cmd)
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, err
	}
	// The child holds its own copies.
	inR.Close()
	outW.Close()
	errW.Close()
	p := &process{server: s.Name, cmd: cmd, log: log, stdin: inW, stdout: outR,
		exited: make(chan struct{}), stderrDone: make(chan struct{})}
	go p.readStderr(errR)
	go p.wait()
	return p, nil
}

// wait reaps the process; then whatever it left in its group is killed,
// which also ends its stdout for the reader.
func (p *process) wait() {
	_ = p.cmd.Wait()
	p.mu.Lock()
	p.state = p.cmd.ProcessState
	p.mu.Unlock()
	close(p.exited)
	p.signalGroup(syscall.SIGKILL)
}

// transport is the newline-delimited JSON transport over the process's
// pipes, stdout read through a filter. Closing it closes the server's
// stdin (and corvid's end of its stdout); the process itself is ended by
// conn.close.
func (p *process) transport() transport {
	return &stdioTransport{
		in:     &jsonLines{r: bufio.NewReaderSize(p.stdout, 64<<10), log: p.log, server: p.server},
		out:    p.stdout,
		w:      p.stdin,
		closed: make(chan struct{}),
	}
}

// stdioTransport sends one message per line on the server's stdin and
// reads one per line from its stdout.
type stdioTransport struct {
	in  *jsonLines
	out *os.File
	w   *os.File

	wmu       sync.Mutex
	closeOnce sync.Once
	closed    chan struct{}
}

func (t *stdioTransport) Send(ctx context.Context, msg []byte) error {
	line := make([]byte, 0, len(msg)+1)
	line = append(append(line, msg...), '\n')
	t.wmu.Lock()
	defer t.wmu.Unlock()
	select {
	case <-t.closed:
		return errSessionClosed
	default:
	}
	_, err := t.w.Write(line)
	return err
}

func (t *stdioTransport) Recv() ([]byte, error) {
	b, err := t.in.next()
	if err != nil {
		select {
		case <-t.closed:
			return nil, errSessionClosed
		default:
		}
	}
	return b, err
}

func (t *stdioTransport) Close() error {
	t.closeOnce.Do(func() {
		close(t.closed)
		t.w.Close()
		t.out.Close()
	})
	return nil
}

// jsonLines passes on only the lines of a server's stdout that are JSON
// values; any other line (a banner, a stray print) is logged and skipped,
// as the reference client does.
type jsonLines struct {
	r      *bufio.Reader
	log    *slog.Logger
	server string
	err    error
}

// next returns the next JSON line, without its line ending.
func (j *jsonLines) next() ([]byte, error) {
	for {
		if j.err != nil {
			return nil, j.err
		}
		line, tooLong, err := readFullLine(j.r, maxMessage+1)
		j.err = err
		trimmed := bytes.TrimSpace(line)
		switch {
		case len(trimmed) == 0:
		case tooLong:
			j.log.Warn("mcp server wrote an over-long line on stdout; skipped", "server", j.server, "bytes", len(line))
		case json.Valid(trimmed):
			return trimmed, nil
		default:
			j.log.Warn("mcp server wrote a line on stdout that is not JSON-RPC; skipped", "server", j.server,
				"line", string(trimmed[:min(len(trimmed), 500)]))
		}
	}
}

// readFullLine reads one line, keeping at most max bytes (tooLong says
// that more were dropped). A last line without a newline is returned with
// a nil error; EOF comes on the next call.
func readFullLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= max {
			line = append(line, chunk...)
		} else {
			tooLong = true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && len(line) > 0 {
			err = nil
		}
		return line, tooLong, err
	}
}

func (p *process) readStderr(r *os.File) {
	defer close(p.stderrDone)
	defer r.Close()
	br := bufio.NewReaderSize(r, 4096)
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

func (p *process) pid() int { return p.cmd.Process.Pid }

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
		signalGroup(p.cmd.Process, sig)
	}
}

// exitText describes how the process ended, e.g. "exit status 3"; "" while
// it runs.
func (p *process) exitText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != nil {
		return p.state.String()
	}
	return ""
}

// waitExit waits up to d for the process to end and says how it ended.
func (p *process) waitExit(d time.Duration) string {
	select {
	case <-p.exited:
	case <-time.After(d):
	}
	return p.exitText()
}

// stop ends the process: stdin is closed already; after grace the group
// gets SIGTERM, after another grace SIGKILL. It returns once the process
// was reaped (or gave up 5 s after SIGKILL: false).
func (p *process) stop(grace time.Duration) bool {
	p.stdin.Close()
	if waitFor(p.exited, grace) {
		return true
	}
	p.signalGroup(syscall.SIGTERM)
	if waitFor(p.exited, grace) {
		return true
	}
	p.signalGroup(syscall.SIGKILL)
	return waitFor(p.exited, 5*time.Second)
}
