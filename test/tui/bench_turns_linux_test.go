package tui_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// startPTYArgs runs corvid-tui with args (and extra environment) on a pty.
func startPTYArgs(b testing.TB, s *session, env []string, args ...string) *ptyTUI {
	b.Helper()
	cmd := exec.Command(filepath.Join(s.bins, "corvid-tui"), append([]string{"--corvid", filepath.Join(s.bins, "corvid"), "--theme", "dark"}, args...)...)
	cmd.Env = append(append(append([]string{}, s.env...), env...), "TERM=xterm-256color")
	return startOnPTY(b, s, cmd)
}

func (p *ptyTUI) read() {
	buf := make([]byte, 64<<10)
	for {
		n, err := p.master.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.out.Write(buf[:n])
			// Keep the tail only: a long benchmark draws megabytes.
			if p.out.Len() > 4<<20 {
				drop := p.out.Len() - 1<<20
				rest := append([]byte(nil), p.out.Bytes()[drop:]...)
				p.out.Reset()
				p.out.Write(rest)
				p.base += drop
			}
			p.mu.Unlock()
			select {
			case p.grew <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// rssKiB is the process's resident set (VmRSS).
func rssKiB(b testing.TB, pid int) int {
	b.Helper()
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

func floodAgent(b testing.TB) string {
	b.Helper()
	return testkit.BuildPackage(b, "./test/tui/floodagent")
}

// BenchmarkRSSAfter1000Turns: corvid-tui's resident memory after one turn
// and after 1,000 turns (each a 20-line Markdown answer with a code block,
// from floodagent's answer mode), and their difference per turn.
func BenchmarkRSSAfter1000Turns(b *testing.B) {
	s := newSession(b)
	agent := floodAgent(b)
	for i := 0; i < b.N; i++ {
		report := filepath.Join(b.TempDir(), "turns")
		p := startPTYArgs(b, s, []string{"FLOOD_ANSWER=1", "FLOOD_REPORT=" + report}, "--", agent)
		p.waitFrom(b, 0, "Ask corvid")
		answered := func() int {
			n, _ := strconv.Atoi(string(must2(os.ReadFile(report))))
			return n
		}
		var first int
		for turn := 1; turn <= 1000; turn++ {
			// The renderer redraws only the cells that changed, so the
			// agent's count says when a turn was answered; an Enter that
			// came while the last turn was still ending is pressed again.
			must(b, write(p.master, fmt.Sprintf("\x15turn %d\r", turn)))
			deadline, pressed := time.Now().Add(30*time.Second), time.Now()
			for answered() < turn {
				if time.Now().After(deadline) {
					b.Fatalf("turn %d was not answered", turn)
				}
				time.Sleep(2 * time.Millisecond)
				if time.Since(pressed) > time.Second && answered() < turn {
					must(b, write(p.master, "\r"))
					pressed = time.Now()
				}
			}
			if turn == 1 {
				time.Sleep(200 * time.Millisecond)
				first = rssKiB(b, p.cmd.Process.Pid)
			}
		}
		time.Sleep(200 * time.Millisecond)
		last := rssKiB(b, p.cmd.Process.Pid)
		b.ReportMetric(float64(first)/1024, "MiB-after-1-turn")
		b.ReportMetric(float64(last)/1024, "MiB-after-1000-turns")
		b.ReportMetric(float64(last-first)/999, "KiB-per-turn")
	}
}

// BenchmarkKeystrokeEchoUnderFlood: a typed character → drawn in the
// input while floodagent streams one-character chunks at 200,000 per
// second; also the rate the TUI actually took them at (the agent writes
// into a pipe the TUI reads: a TUI that falls behind slows the agent).
func BenchmarkKeystrokeEchoUnderFlood(b *testing.B) {
	s := newSession(b)
	agent := floodAgent(b)
	var lat, rates []float64
	for i := 0; i < b.N; i++ {
		report := filepath.Join(b.TempDir(), "rate")
		p := startPTYArgs(b, s, []string{"FLOOD_RATE=200000", "FLOOD_SECONDS=600", "FLOOD_REPORT=" + report}, "--", agent)
		p.waitFrom(b, 0, "Ask corvid")
		must(b, write(p.master, "go\r"))
		p.waitFrom(b, 0, "xxxxxxxxxx")
		for k := 0; k < 100; k++ {
			from := p.len()
			start := time.Now()
			must(b, write(p.master, "Q"))
			lat = append(lat, float64(p.waitFrom(b, from, "Q").Sub(start).Microseconds())/1000)
			time.Sleep(5 * time.Millisecond)
		}
		must(b, write(p.master, "\x1b")) // Esc: cancel, and the agent reports its rate
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if r, err := os.ReadFile(report); err == nil {
				var sent int
				var took float64
				// The file may be read before the agent finished writing it.
				if n, _ := fmt.Sscan(string(r), &sent, &took); n == 2 && took > 0 {
					rates = append(rates, float64(sent)/took)
					break
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
	sort.Float64s(lat)
	b.ReportMetric(median(lat), "ms-echo-p50")
	b.ReportMetric(lat[len(lat)*99/100], "ms-echo-p99")
	if len(rates) > 0 {
		b.ReportMetric(median(rates), "chunks/s")
	}
}

// must2 is the value, or nothing when there is an error (a file not
// written yet).
func must2(b []byte, err error) []byte {
	if err != nil {
		return nil
	}
	return b
}
