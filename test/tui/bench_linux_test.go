package tui_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// These benchmarks run corvid-tui on a pseudo-terminal of their own (no
// tmux, whose polling would add its own latency) and read what it draws.
//
//	go test -run '^$' -bench . -benchtime 5x ./test/tui/

// ptyTUI is corvid-tui running on a pty; out collects what it writes.
type ptyTUI struct {
	cmd    *exec.Cmd
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	base   int           // bytes dropped from the front of out
	grew   chan struct{} // signalled after each read
}

func openPTY(b testing.TB, cols, rows int) (master, slave *os.File) {
	b.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		b.Skipf("no pty: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		b.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		b.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		b.Fatal(err)
	}
	return m, s
}

func startPTY(b testing.TB, s *session, model string) *ptyTUI {
	b.Helper()
	cmd := exec.Command(filepath.Join(s.bins, "corvid-tui"), "--corvid", filepath.Join(s.bins, "corvid"), "-m", model, "--theme", "dark")
	cmd.Env = append(append([]string{}, s.env...), "TERM=xterm-256color")
	return startOnPTY(b, s, cmd)
}

// startOnPTY starts cmd in the session's directory on a new 100×30
// pseudo-terminal, its controlling terminal, and reads what it writes.
func startOnPTY(b testing.TB, s *session, cmd *exec.Cmd) *ptyTUI {
	b.Helper()
	master, slave := openPTY(b, 100, 30)
	return startOn(b, s, cmd, master, slave)
}

// startOn starts cmd in the session's directory on the pseudo-terminal
// slave, its controlling terminal, and reads what it writes from master.
func startOn(b testing.TB, s *session, cmd *exec.Cmd, master, slave *os.File) *ptyTUI {
	b.Helper()
	cmd.Dir = s.dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	slave.Close()
	p := &ptyTUI{cmd: cmd, master: master, grew: make(chan struct{}, 1)}
	go p.read()
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		master.Close()
	})
	return p
}

// waitFrom waits until the output after offset from contains want and
// returns the time it was read.
func (p *ptyTUI) waitFrom(b testing.TB, from int, want string) time.Time {
	b.Helper()
	return p.waitFromWithin(b, from, want, 30*time.Second)
}

// waitFromWithin is waitFrom with its own deadline (a benchmark that
// measures a slow path reports how slow, rather than failing). Each look
// reads only what came since the last (and the marker's length before
// it): the 10 MB answer's benchmark read all of the output at each of its
// thousands of reads, seconds of the benchmark's own CPU on the cores the
// TUI and the agent share.
func (p *ptyTUI) waitFromWithin(b testing.TB, from int, want string, within time.Duration) time.Time {
	b.Helper()
	deadline := time.After(within)
	next := from // the output before next was read, but for its last len(want)-1 bytes
	for {
		p.mu.Lock()
		start := min(max(max(next-len(want)+1, from)-p.base, 0), p.out.Len())
		found := bytes.Contains(p.out.Bytes()[start:], []byte(want))
		next = p.base + p.out.Len()
		p.mu.Unlock()
		if found {
			return time.Now()
		}
		select {
		case <-p.grew:
		case <-deadline:
			b.Fatalf("corvid-tui never drew %q", want)
		}
	}
}

func (p *ptyTUI) len() int { p.mu.Lock(); defer p.mu.Unlock(); return p.base + p.out.Len() }

// cpuTime is the process's user+system time.
func cpuTime(b testing.TB, pid int) time.Duration {
	b.Helper()
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	s := string(st)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.Atoi(f[11])
	stt, _ := strconv.Atoi(f[12])
	return time.Duration(ut+stt) * time.Second / 100 // USER_HZ
}

// BenchmarkOpenToFirstPaint: spawn → the first frame (the input line), and
// → the session open (the input ready).
func BenchmarkOpenToFirstPaint(b *testing.B) {
	s := newSession(b)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "hi"}]}]}`)
	var paint, ready []float64
	for i := 0; i < b.N; i++ {
		start := time.Now()
		p := startPTY(b, s, model)
		t1 := p.waitFrom(b, 0, "› ")
		t2 := p.waitFrom(b, 0, "Ask corvid")
		paint = append(paint, float64(t1.Sub(start).Microseconds())/1000)
		ready = append(ready, float64(t2.Sub(start).Microseconds())/1000)
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
	b.ReportMetric(median(paint), "ms-first-paint")
	b.ReportMetric(median(ready), "ms-session-ready")
}

// BenchmarkIdleCPU: CPU time of corvid-tui over 10 s with nothing
// happening, and the bytes it draws meanwhile (0: no redraw when nothing
// changes).
func BenchmarkIdleCPU(b *testing.B) {
	s := newSession(b)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "hi"}]}]}`)
	for i := 0; i < b.N; i++ {
		p := startPTY(b, s, model)
		p.waitFrom(b, 0, "Ask corvid")
		time.Sleep(500 * time.Millisecond) // the first frames settle
		c0, n0 := cpuTime(b, p.cmd.Process.Pid), p.len()
		time.Sleep(10 * time.Second)
		c1, n1 := cpuTime(b, p.cmd.Process.Pid), p.len()
		b.ReportMetric(float64((c1 - c0).Milliseconds()), "cpu-ms/10s")
		b.ReportMetric(float64(n1-n0), "bytes-drawn/10s")
	}
}

// BenchmarkKeystrokeEcho: a typed character → drawn in the input, with no
// turn running (idle) and while the agent streams one-character chunks as
// fast as the scripted model sends them (streaming).
func BenchmarkKeystrokeEcho(b *testing.B) {
	for _, streaming := range []bool{false, true} {
		name := "idle"
		if streaming {
			name = "streaming"
		}
		b.Run(name, func(b *testing.B) {
			s := newSession(b)
			model := s.script("flood.json", `{"chunkSize": 1, "responses": [{"parts": [{"type": "text", "text": "x", "repeat": 3000000}]}]}`)
			var lat []float64
			for i := 0; i < b.N; i++ {
				p := startPTY(b, s, model)
				p.waitFrom(b, 0, "Ask corvid")
				if streaming {
					must(b, write(p.master, "go\r"))
					p.waitFrom(b, 0, "xxxxxxxxxx")
				}
				for k := 0; k < 100; k++ {
					from := p.len()
					start := time.Now()
					must(b, write(p.master, "Q"))
					lat = append(lat, float64(p.waitFrom(b, from, "Q").Sub(start).Microseconds())/1000)
					time.Sleep(5 * time.Millisecond)
				}
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
			sort.Float64s(lat)
			b.ReportMetric(median(lat), "ms-echo-p50")
			b.ReportMetric(lat[len(lat)*99/100], "ms-echo-p99")
		})
	}
}

func write(f *os.File, s string) error { _, err := f.WriteString(s); return err }

func median(v []float64) float64 {
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	return c[len(c)/2]
}
