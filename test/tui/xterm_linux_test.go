package tui_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// xterm.js, the engine of VS Code's integrated terminal (and Cursor's,
// Windsurf's, Hyper, Tabby), as the terminal of the TUI: the TUI runs on a
// pty of its own, and every byte it writes goes to xterm-host.cjs, which
// applies it to @xterm/headless (pinned in test/tui/xterm/package-lock.json,
// installed by test/tui/xterm/install.sh). A resize is done as a real
// terminal does it: xterm.js resizes first, with every byte read so far
// applied, then the pty's size is set and the TUI gets SIGWINCH; bytes the
// TUI wrote before it learnt of the new size are parsed at the new size.
//
//	bash test/tui/xterm/install.sh && go test ./test/tui/ -run XTerm

// xtermDir is test/tui/xterm with @xterm/headless installed; without it
// (or without node) the test skips, or fails under CI=true.
func xtermDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "test", "tui", "xterm")
	missing := ""
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@xterm", "headless", "package.json")); err != nil {
		missing = "test/tui/xterm/node_modules/@xterm/headless"
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node on PATH"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing (.ci/run runs test/tui/xterm/install.sh)", missing)
		}
		t.Skipf("%s is missing: run `bash test/tui/xterm/install.sh` (Node >= 20 and npm)", missing)
	}
	return dir
}

// xtermHost is xterm-host.cjs running: a headless xterm.js terminal.
type xtermHost struct {
	t      *testing.T
	cmd    *exec.Cmd
	inMu   sync.Mutex
	in     io.WriteCloser
	mu     sync.Mutex
	nextID int
	acks   map[int]chan xtermReply
	// replies gets what the terminal answers the program (its replies
	// to queries), for the pty.
	replies chan []byte
}

type xtermReply struct {
	Ack     *int     `json:"ack"`
	Data    string   `json:"data"`
	Lines   []string `json:"lines"`
	Wrapped []bool   `json:"wrapped"`
	Cursor  []int    `json:"cursor"`
	Base    int      `json:"base"`
}

func startXTerm(t *testing.T, cols, rows int, env ...string) *xtermHost {
	t.Helper()
	dir := xtermDir(t)
	cmd := exec.Command("node", filepath.Join(dir, "xterm-host.cjs"))
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), fmt.Sprintf("XTERM_COLS=%d", cols), fmt.Sprintf("XTERM_ROWS=%d", rows)), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	must(t, err)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	h := &xtermHost{t: t, cmd: cmd, in: in, acks: map[int]chan xtermReply{}, replies: make(chan []byte, 64)}
	go h.readReplies(out)
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return h
}

func (h *xtermHost) readReplies(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		var r xtermReply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			continue
		}
		if r.Ack == nil {
			if b, err := base64.StdEncoding.DecodeString(r.Data); err == nil {
				h.replies <- b
			}
			continue
		}
		h.mu.Lock()
		ch := h.acks[*r.Ack]
		delete(h.acks, *r.Ack)
		h.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	close(h.replies)
}

func (h *xtermHost) send(cmd map[string]any) {
	b, _ := json.Marshal(cmd)
	h.inMu.Lock()
	defer h.inMu.Unlock()
	_, _ = h.in.Write(append(b, '\n'))
}

// call sends op and waits for its answer, given after every byte sent
// before it was applied.
func (h *xtermHost) call(op string, args map[string]any) xtermReply {
	h.t.Helper()
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	ch := make(chan xtermReply, 1)
	h.acks[id] = ch
	h.mu.Unlock()
	cmd := map[string]any{"op": op, "id": id}
	for k, v := range args {
		cmd[k] = v
	}
	h.send(cmd)
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		h.t.Fatalf("xterm-host never answered %s", op)
	}
	return xtermReply{}
}

func (h *xtermHost) write(p []byte) {
	h.send(map[string]any{"op": "write", "data": base64.StdEncoding.EncodeToString(p)})
}

// xtermBuffer is the terminal's buffer: scrollback, then the screen.
type xtermBuffer struct {
	rows    []string
	wrapped []bool
	base    int // the screen's first row
	cursor  [2]int
}

func (h *xtermHost) dump() xtermBuffer {
	h.t.Helper()
	r := h.call("dump", nil)
	b := xtermBuffer{rows: r.Lines, wrapped: r.Wrapped, base: r.Base}
	if len(r.Cursor) == 2 {
		b.cursor = [2]int{r.Cursor[0], r.Cursor[1]}
	}
	return b
}

// lines is the buffer's text a line a row, a row the terminal wrapped
// (or re-wrapped) joined to the one before, as tmux's capture-pane -J.
func (b xtermBuffer) lines() []string {
	var out []string
	for i, r := range b.rows {
		if i > 0 && b.wrapped[i] && len(out) > 0 {
			out[len(out)-1] += r
			continue
		}
		out = append(out, r)
	}
	return out
}

func (b xtermBuffer) text() string { return strings.Join(b.lines(), "\n") }

// screen is the rows on the screen.
func (b xtermBuffer) screen() string { return strings.Join(b.rows[min(b.base, len(b.rows)):], "\n") }

// xtermTUI is corvid's TUI on a pty whose terminal is xterm.js.
type xtermTUI struct {
	t      *testing.T
	term   *xtermHost
	master *os.File
	cmd    *exec.Cmd
	// fwd is held while a read of the pty is handed to xterm.js, and by
	// a resize: xterm.js resizes between two reads, as a terminal does.
	fwd sync.Mutex
	// trace, when XTERM_TRACE names a file, gets every byte the TUI
	// wrote, and a line for each resize.
	trace *os.File
}

// startXTermTUI runs `corvid ARGS` in the session's directory on a
// cols×rows pty whose terminal is xterm.js, with env added to the
// session's.
func startXTermTUI(t *testing.T, s *session, cols, rows int, env []string, xtermEnv []string, args ...string) *xtermTUI {
	t.Helper()
	h := startXTerm(t, cols, rows, xtermEnv...)
	master, slave := openPTY(t, cols, rows)
	cmd := exec.Command(filepath.Join(s.bins, "corvid"), args...)
	cmd.Dir = s.dir
	cmd.Env = append(append(append([]string{}, s.env...), "TERM=xterm-256color"), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	must(t, cmd.Start())
	slave.Close()
	x := &xtermTUI{t: t, term: h, master: master, cmd: cmd}
	if f := os.Getenv("XTERM_TRACE"); f != "" {
		tr, err := os.Create(f)
		must(t, err)
		x.trace = tr
		t.Cleanup(func() { tr.Close() })
	}
	go x.forward()
	go func() {
		for b := range h.replies {
			_, _ = master.Write(b)
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		master.Close()
	})
	return x
}

func (x *xtermTUI) forward() {
	buf := make([]byte, 64<<10)
	for {
		n, err := x.master.Read(buf)
		if n > 0 {
			x.fwd.Lock()
			x.term.write(buf[:n])
			if x.trace != nil {
				_, _ = x.trace.Write(buf[:n])
			}
			x.fwd.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// resize resizes xterm.js with every byte read so far applied, then the
// pty (the TUI gets SIGWINCH).
func (x *xtermTUI) resize(cols, rows int) {
	x.t.Helper()
	x.fwd.Lock()
	defer x.fwd.Unlock()
	x.term.call("resize", map[string]any{"cols": cols, "rows": rows})
	if x.trace != nil {
		fmt.Fprintf(x.trace, "\x00RESIZE %dx%d\x00", cols, rows)
	}
	if err := unix.IoctlSetWinsize(int(x.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		x.t.Fatal(err)
	}
}

func (x *xtermTUI) typeText(s string) { must(x.t, write(x.master, s)) }

// waitUntil polls the buffer until ok.
func (x *xtermTUI) waitUntil(what string, ok func(xtermBuffer) bool) xtermBuffer {
	x.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var b xtermBuffer
	for time.Now().Before(deadline) {
		b = x.term.dump()
		if ok(b) {
			return b
		}
		time.Sleep(100 * time.Millisecond)
	}
	x.t.Fatalf("timed out waiting for %s; the screen:\n%s", what, b.screen())
	return b
}

func (x *xtermTUI) waitFor(want string) xtermBuffer {
	x.t.Helper()
	return x.waitUntil(fmt.Sprintf("%q", want), func(b xtermBuffer) bool { return strings.Contains(b.text(), want) })
}

// idle waits until no turn runs, and returns the buffer then.
func (x *xtermTUI) idle() xtermBuffer {
	x.t.Helper()
	return x.waitUntil("the turn to end", func(b xtermBuffer) bool {
		scr := b.screen()
		return strings.Contains(scr, "Ask corvid") && !strings.Contains(scr, "working")
	})
}
