package serve

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A child of this test binary that connects to the address in
// SERVE_PEER_DIAL, says "connected" and holds the connection.
func init() {
	addr := os.Getenv("SERVE_PEER_DIAL")
	if addr == "" {
		return
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Println("dial:", err)
		os.Exit(1)
	}
	fmt.Println("connected", c.LocalAddr())
	time.Sleep(time.Minute)
	os.Exit(0)
}

// loopback listens on 127.0.0.1 and returns the accepted side of the next
// connection.
func listenLoopback(t testing.TB) (net.Listener, chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan net.Conn, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			got <- c
		}
	}()
	return ln, got
}

// startChild starts a child of this process (optionally dialing addr) and
// waits until it has connected.
func startChild(t testing.TB, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SERVE_PEER_DIAL="+addr)
	if addr == "" {
		cmd = exec.Command("sleep", "60")
	}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if addr != "" {
		line, _ := bufio.NewReader(out).ReadString('\n')
		if !strings.HasPrefix(line, "connected") {
			t.Fatalf("child: %q", line)
		}
	}
	return cmd
}

func TestTCPPeerThatDescendsFromTheDaemonIsRefused(t *testing.T) {
	ln, got := listenLoopback(t)
	child := startChild(t, ln.Addr().String())
	c := <-got
	defer c.Close()
	err := refuseTCPDescendant(c)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(pid %d) was started by this daemon", child.Process.Pid)) {
		t.Fatalf("a child's connection: %v", err)
	}
}

func TestTCPPeerThatIsNotADescendantIsServed(t *testing.T) {
	ln, got := listenLoopback(t)
	startChild(t, "") // a descendant holding no connection
	mine, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	c := <-got
	defer c.Close()
	if err := refuseTCPDescendant(c); err != nil {
		t.Fatalf("this process's own connection was refused: %v", err)
	}
}

// BenchmarkAcceptCheck is what refuseTCPDescendant costs per accepted
// connection whose peer is not the daemon's descendant (the whole look):
// with no descendant, and with 10 (each a sleep holding a few files).
func BenchmarkAcceptCheck(b *testing.B) {
	for _, n := range []int{0, 10} {
		b.Run(fmt.Sprintf("descendants=%d", n), func(b *testing.B) {
			ln, got := listenLoopback(b)
			for range n {
				startChild(b, "")
			}
			mine, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer mine.Close()
			c := <-got
			defer c.Close()
			before := cpuTime()
			b.ResetTimer()
			for range b.N {
				if err := refuseTCPDescendant(c); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			// CPU time (user+system) tells the cost on a loaded machine,
			// where ns/op also counts the wait for a core.
			b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is this process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
