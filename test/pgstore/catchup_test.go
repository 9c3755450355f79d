package pgstore

import (
	"bytes"
	"io"
	"net"
	neturl "net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// listenHold is a loopback proxy (a unix socket) in front of the test
// server: every connection passes through, except that a client's
// LISTEN statement waits in it until release is closed. A corvid process
// whose store URL names it has a listening connection that listens only
// when the test says: a loaded machine's late LISTEN, made certain.
type listenHold struct {
	dir     string
	held    chan struct{} // closed when the first LISTEN arrives
	release chan struct{}
	once    sync.Once
}

// holdListen starts a proxy for the server of url and returns the URL
// that goes through it.
func holdListen(t *testing.T, url string) (*listenHold, string) {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	target := filepath.Join(q.Get("host"), ".s.PGSQL."+q.Get("port"))
	h := &listenHold{dir: t.TempDir(), held: make(chan struct{}), release: make(chan struct{})}
	ln, err := net.Listen("unix", filepath.Join(h.dir, ".s.PGSQL."+q.Get("port")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ln.Close()
		h.open()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go h.pipe(c, target)
		}
	}()
	q.Set("host", h.dir)
	u.RawQuery = q.Encode()
	return h, u.String()
}

// open lets every held LISTEN through.
func (h *listenHold) open() {
	select {
	case <-h.release:
	default:
		close(h.release)
	}
}

func (h *listenHold) pipe(c net.Conn, target string) {
	defer c.Close()
	s, err := net.Dial("unix", target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() {
		_, _ = io.Copy(c, s)
		c.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if bytes.Contains(buf[:n], []byte("LISTEN ")) {
				h.once.Do(func() { close(h.held) })
				<-h.release
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// B's first listening connection listens only after A's turn committed
// its last rows (B loaded the session in the middle of the turn): B still
// shows the whole turn, once, in order, as soon as it listens. It showed
// the replay and then nothing more before the catch-up on the first
// LISTEN.
func TestBShowsATurnThatEndedBeforeItsFirstListen(t *testing.T) {
	url := database(t)
	hold, heldURL := holdListen(t, url)
	workspace := t.TempDir()
	script := liveScript(t)
	a := start(t, script, workspace, []string{"--store", url})
	b := start(t, script, workspace, []string{"--store", heldURL})
	sid := a.NewSession(a.ctx, workspace)

	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "stream it"))
	waitText(t, a, sid, 200)
	replayed := text(b.load(t, sid, workspace))
	select {
	case <-hold.held:
	case <-time.After(30 * time.Second):
		t.Fatalf("B never sent its LISTEN\n%s", b.Stderr())
	}
	if _, rerr := p.Wait(a.ctx); rerr != nil {
		t.Fatalf("A's turn: %v", rerr)
	}
	want := strings.Repeat("0123456789", 150)
	time.Sleep(200 * time.Millisecond)
	before := text(b.Updates(sid))
	if len(replayed) == 0 || len(before) >= len(want) {
		t.Fatalf("B showed %d bytes (%d replayed) before it listened; want a load in the middle of the turn, and rows committed after it", len(before), len(replayed))
	}
	hold.open()
	deadline := time.Now().Add(20 * time.Second)
	for len(text(b.Updates(sid))) < len(want) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // a duplicate would come now
	got := text(b.Updates(sid))
	if got != want {
		t.Fatalf("B showed %d bytes (%d before it listened), want exactly A's %d:\n%.200q", len(got), len(before), len(want), got)
	}
	if ps := prompts(b.Updates(sid)); len(ps) != 1 || ps[0] != "stream it" {
		t.Errorf("B showed prompts %q, want A's once", ps)
	}
	t.Logf("B replayed %d bytes, had %d before its LISTEN, %d after", len(replayed), len(before), len(got))
}

// The writer's own first LISTEN takes effect in the middle of its turn:
// the catch-up it then makes shows none of the rows it wrote (and
// showed) itself again.
func TestWriterListeningMidTurnShowsNothingTwice(t *testing.T) {
	url := database(t)
	hold, heldURL := holdListen(t, url)
	workspace := t.TempDir()
	script := liveScript(t)
	a := start(t, script, workspace, []string{"--store", heldURL})
	sid := a.NewSession(a.ctx, workspace)
	select {
	case <-hold.held:
	case <-time.After(30 * time.Second):
		t.Fatalf("A never sent its LISTEN\n%s", a.Stderr())
	}
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "stream it"))
	waitText(t, a, sid, 300)
	hold.open()
	if _, rerr := p.Wait(a.ctx); rerr != nil {
		t.Fatalf("A's turn: %v", rerr)
	}
	time.Sleep(100 * time.Millisecond) // a duplicate would come now
	want := strings.Repeat("0123456789", 150)
	if got := text(a.Updates(sid)); got != want {
		t.Fatalf("A showed %d bytes of its own turn, want exactly %d:\n%.300q", len(got), len(want), got)
	}
}
