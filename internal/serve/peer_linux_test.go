package serve

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
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

// The fallback (/proc/net/tcp, tcp6) finds the socket sock_diag finds, on
// IPv4 and IPv6 loopback.
func TestProcNetTCPAgreesWithSockDiag(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v", addr, err)
			continue
		}
		defer ln.Close()
		mine, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer mine.Close()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r, l := c.RemoteAddr().(*net.TCPAddr), c.LocalAddr().(*net.TCPAddr)
		diag, err := diagInode(r, l)
		if err != nil || diag == 0 {
			t.Fatalf("%s: sock_diag: %d %v", addr, diag, err)
		}
		file := "/proc/net/tcp"
		if r.IP.To4() == nil {
			file = "/proc/net/tcp6"
		}
		proc, err := findSocket(file, r, l)
		if err != nil || proc != diag {
			t.Fatalf("%s: %s says %d (%v), sock_diag %d", addr, file, proc, err, diag)
		}
		// and it is the dialer's socket, not the accepted one
		var st syscall.Stat_t
		f, _ := mine.(*net.TCPConn).File()
		defer f.Close()
		if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Ino != diag {
			t.Fatalf("%s: the dialer's socket is inode %d, found %d", addr, st.Ino, diag)
		}
	}
}

// The fallback of kernels without children files lists the same
// descendants, grandchildren included.
func TestDescendantsByParentAgreesWithChildrenFiles(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & sleep 60 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // killed as a group
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var a, b []int
	for deadline := time.Now().Add(5 * time.Second); len(a) < 3 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		a, _ = descendants(os.Getpid())
	}
	b, err := descendantsByParent(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(a)
	slices.Sort(b)
	if len(a) < 3 || !slices.Equal(a, b) {
		t.Fatalf("children files: %v; parents: %v; want the same 3 or more", a, b)
	}
}
