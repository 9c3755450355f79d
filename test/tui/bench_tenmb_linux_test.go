package tui_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkTenMBAnswer: a 10 MB answer (100,000 lines of 100 bytes, then
// an end marker) from the scripted model in 4 KiB chunks, drawn by the TUI
// (prompt sent → the end marker drawn) against `corvid run -p` printing
// the same script to a pipe (start → exit, its start-up included) and on
// a pseudo-terminal read as the TUI's is (start → the end marker read).
// The ratios (tui/run-p, tui/run-p-tty) are the medians of each
// iteration's own: the TUI against the run -p run beside it, so that a
// load that comes and goes on a shared machine weighs on both sides of a
// ratio; worst-tui/run-p-tty is the largest. Every other iteration runs
// its steps in the reverse order.
//
// Beside them, what bounds the TUI's time:
//   - s-acp: `corvid acp` alone on the same script, prompt → its answer, to
//     a client that only reads: the agent's own pace;
//   - s-pty-floor: `cat` of run -p's output (the same answer) on the same
//     pseudo-terminal in raw mode, as the TUI sets it: the terminal's own
//     pace for these bytes, with nothing computed;
//   - the CPU of each side of the TUI's run: the TUI, the agent it runs,
//     and the whole machine's (the benchmark's own reading of the terminal
//     and the kernel's work included), and the cores busy on average
//     (cpu-s-machine / s-tui). run -p's own CPU, for scale;
//   - ctxsw-tui: the context switches of the TUI's threads (voluntary and
//     not) through its run: each hand-off to a parked thread, and each wait
//     for the terminal to take what the TUI writes;
//   - agent-waits-%: of samples every 2 ms through the TUI's run, those in
//     which a thread of the agent waits to write into the pipe the TUI
//     reads (the TUI holding the agent up).
func BenchmarkTenMBAnswer(b *testing.B) {
	s := newSession(b)
	line := strings.Repeat("0123456789", 9) + "lorem ips\\n"
	model := s.script("big.json", `{"chunkSize": 4096, "responses": [{"parts": [
	  {"type": "text", "text": "`+line+`", "repeat": 100000},
	  {"type": "text", "text": "END-OF-ANSWER\n"}]}], "onExhausted": "repeat-last"}`)
	var tui, print, printCPU, onTTY, floor, alone, drawn []float64
	var cpuTUI, cpuAgent, cpuMachine, waits, switches []float64
	var ratioPipe, ratioTTY []float64 // each iteration's TUI against its own run -p
	for i := 0; i < b.N; i++ {
		var out []byte
		steps := []func(){
			func() { alone = append(alone, acpAlone(b, s, model)) },
			func() {
				start := time.Now()
				cmd := exec.Command(filepath.Join(s.bins, "corvid"), "run", "-p", "go", "-m", model)
				cmd.Dir, cmd.Env = s.dir, s.env
				var err error
				out, err = cmd.Output()
				if err != nil || !strings.Contains(string(out[max(0, len(out)-100):]), "END-OF-ANSWER") {
					b.Fatalf("corvid run -p: %v (%d bytes)", err, len(out))
				}
				print = append(print, time.Since(start).Seconds())
				printCPU = append(printCPU, (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds())
			},
			func() {
				// The same on a terminal: what a user typing `corvid run -p`
				// there waits for, the terminal's own pace included.
				cmd := exec.Command(filepath.Join(s.bins, "corvid"), "run", "-p", "go", "-m", model)
				cmd.Env = append(append([]string{}, s.env...), "TERM=xterm-256color")
				start := time.Now()
				pp := startOnPTY(b, s, cmd)
				pp.waitFromWithin(b, 0, "END-OF-ANSWER", 5*time.Minute)
				onTTY = append(onTTY, time.Since(start).Seconds())
				_ = cmd.Wait()
			},
			func() { floor = append(floor, ptyFloor(b, s, out)) },
			func() {
				p := startPTY(b, s, model)
				p.waitFrom(b, 0, "Ask corvid")
				agent := childPID(b, p.cmd.Process.Pid)
				from := p.len()
				c0, a0, m0 := cpuTime(b, p.cmd.Process.Pid), cpuTime(b, agent), machineCPU(b)
				sw0 := contextSwitches(b, p.cmd.Process.Pid)
				stop := make(chan struct{})
				waited := sampleWaits(agent, stop)
				start := time.Now()
				must(b, write(p.master, "go\r"))
				p.waitFromWithin(b, from, "END-OF-ANSWER", 5*time.Minute)
				tui = append(tui, time.Since(start).Seconds())
				close(stop)
				waits = append(waits, <-waited)
				cpuMachine = append(cpuMachine, (machineCPU(b) - m0).Seconds())
				cpuTUI = append(cpuTUI, (cpuTime(b, p.cmd.Process.Pid) - c0).Seconds())
				cpuAgent = append(cpuAgent, (cpuTime(b, agent) - a0).Seconds())
				switches = append(switches, float64(contextSwitches(b, p.cmd.Process.Pid)-sw0))
				drawn = append(drawn, float64(p.len()-from)/1e6)
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			},
		}
		// Every other iteration runs the TUI first and run -p last (the
		// floor needs run -p's output: it stays after run -p), so that
		// neither side always follows the other.
		order := []int{0, 1, 2, 3, 4}
		if i%2 == 1 {
			order = []int{4, 1, 2, 3, 0}
		}
		for _, k := range order {
			steps[k]()
		}
		ratioPipe = append(ratioPipe, tui[i]/print[i])
		ratioTTY = append(ratioTTY, tui[i]/onTTY[i])
	}
	b.ReportMetric(median(print), "s-run-p")
	b.ReportMetric(median(tui), "s-tui")
	b.ReportMetric(median(ratioPipe), "tui/run-p")
	b.ReportMetric(median(onTTY), "s-run-p-tty")
	b.ReportMetric(median(ratioTTY), "tui/run-p-tty")
	b.ReportMetric(slices.Max(ratioTTY), "worst-tui/run-p-tty")
	b.ReportMetric(median(alone), "s-acp")
	b.ReportMetric(median(tui)/median(alone), "tui/acp")
	b.ReportMetric(median(floor), "s-pty-floor")
	b.ReportMetric(median(drawn), "MB-drawn")
	b.ReportMetric(median(cpuTUI), "cpu-s-tui")
	b.ReportMetric(median(cpuAgent), "cpu-s-agent")
	b.ReportMetric(median(printCPU), "cpu-s-run-p")
	b.ReportMetric(median(cpuMachine), "cpu-s-machine")
	b.ReportMetric(median(cpuMachine)/median(tui), "cores-busy")
	b.ReportMetric(median(switches), "ctxsw-tui")
	b.ReportMetric(median(waits), "agent-waits-%")
}

// contextSwitches is the number of context switches, voluntary or not, of
// pid's threads so far (those of threads that exited are not counted: the
// Go runtime keeps its threads).
func contextSwitches(b *testing.B, pid int) int {
	b.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	must(b, err)
	n := 0
	for _, t := range tasks {
		st, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited meanwhile
		}
		for l := range strings.Lines(string(st)) {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				c, err := strconv.Atoi(strings.TrimSpace(v))
				must(b, err)
				n += c
			}
		}
	}
	return n
}

// sampleWaits looks at the threads of pid every 2 ms until stop, and
// sends the share of looks (in %) in which one of them waited to write
// into a pipe.
func sampleWaits(pid int, stop <-chan struct{}) <-chan float64 {
	res := make(chan float64, 1)
	go func() {
		looks, waits := 0, 0
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				res <- 100 * float64(waits) / float64(max(looks, 1))
				return
			case <-tick.C:
			}
			looks++
			tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
			for _, t := range tasks {
				if w, err := os.ReadFile(t); err == nil && bytes.Contains(w, []byte("pipe_write")) {
					waits++
					break
				}
			}
		}
	}()
	return res
}

// ptyFloor times `cat` of answer on a pseudo-terminal of the TUI's size
// in raw mode (no output processing, as the TUI sets it), read as the
// TUI's is: start → the answer's end marker read.
func ptyFloor(b *testing.B, s *session, answer []byte) float64 {
	b.Helper()
	file := filepath.Join(b.TempDir(), "answer.txt")
	must(b, os.WriteFile(file, answer, 0o600))
	master, slave := openPTY(b, 100, 30)
	t, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	must(b, err)
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ICANON | unix.ISIG | unix.IEXTEN
	must(b, unix.IoctlSetTermios(int(slave.Fd()), unix.TCSETS, t))
	cmd := exec.Command("cat", file)
	start := time.Now()
	p := startOn(b, s, cmd, master, slave)
	p.waitFromWithin(b, 0, "END-OF-ANSWER", 5*time.Minute)
	took := time.Since(start).Seconds()
	_ = cmd.Wait()
	return took
}

// childPID is the one child process of pid (the TUI's agent).
func childPID(b *testing.B, pid int) int {
	b.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	must(b, err)
	var kids []string
	for _, t := range tasks {
		c, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err == nil {
			kids = append(kids, strings.Fields(string(c))...)
		}
	}
	if len(kids) != 1 {
		b.Fatalf("corvid-tui has %d child processes (%v), want its agent alone", len(kids), kids)
	}
	n, err := strconv.Atoi(kids[0])
	must(b, err)
	return n
}

// machineCPU is the CPU time all cores spent busy since boot (/proc/stat:
// user, nice, system, irq and softirq; not idle, iowait, or the time a
// hypervisor gave to others, steal, and not guest, which user counts).
func machineCPU(b *testing.B) time.Duration {
	b.Helper()
	st, err := os.ReadFile("/proc/stat")
	must(b, err)
	f := strings.Fields(string(st[:bytes.IndexByte(st, '\n')]))
	var busy int
	for i, v := range f[1:] {
		n, err := strconv.Atoi(v)
		must(b, err)
		if i <= 2 || i == 5 || i == 6 {
			busy += n
		}
	}
	return time.Duration(busy) * time.Second / 100 // USER_HZ
}

// acpAlone runs `corvid acp -m model`, opens a session and times its
// prompt → the prompt's answer, reading every frame and nothing more.
func acpAlone(b *testing.B, s *session, model string) float64 {
	b.Helper()
	cmd := exec.Command(filepath.Join(s.bins, "corvid"), "acp", "-m", model)
	cmd.Dir, cmd.Env = s.dir, s.env
	in, err := cmd.StdinPipe()
	must(b, err)
	out, err := cmd.StdoutPipe()
	must(b, err)
	must(b, cmd.Start())
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	r := bufio.NewReaderSize(out, 1<<20)
	until := func(want string) []byte {
		for {
			l, err := r.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				continue // a long frame: not the one waited for
			}
			if err != nil {
				b.Fatalf("corvid acp: %v before %s", err, want)
			}
			if bytes.Contains(l, []byte(want)) {
				return l
			}
		}
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	until(`"id":1,`)
	dir, _ := json.Marshal(s.dir)
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%s,"mcpServers":[]}}`+"\n", dir)
	var opened struct {
		Result struct{ SessionID string }
	}
	must(b, json.Unmarshal(until(`"id":2,`), &opened))
	start := time.Now()
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`+"\n", opened.Result.SessionID)
	until(`"stopReason"`)
	return time.Since(start).Seconds()
}
