package tui_test

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl+V in the TUI against a real Wayland clipboard: Debian's weston
// (the reference compositor) and wl-clipboard, which .ci/run installs.
// wl-copy puts the bytes on the clipboard as a screenshot tool does, and
// the TUI, run with WAYLAND_DISPLAY and no DISPLAY, reads them back with
// wl-paste as it would on a Wayland desktop.
//
// weston runs on its X11 backend, on an Xvfb of the test's own, not on
// its headless backend: weston 10's headless backend creates no seat (no
// wl_seat global; wl-copy and wl-paste both stop at "Missing a seat"),
// and a Wayland clipboard belongs to a seat. The X11 backend gives weston
// a seat with a keyboard; the TUI and the wl-clipboard tools are Wayland
// clients only (no DISPLAY).

const waylandSocket = "wl-corvid"

// wayland is a running compositor: the environment its clients need.
type wayland struct {
	runtimeDir string // XDG_RUNTIME_DIR, 0700, holding the socket
	log        string // weston's log
}

func (w wayland) env() []string {
	return []string{"WAYLAND_DISPLAY=" + waylandSocket, "XDG_RUNTIME_DIR=" + w.runtimeDir}
}

// needWayland skips without Xvfb, weston or wl-clipboard, except under
// CI=true, where a missing one fails: CI cannot pass by skipping.
func needWayland(t *testing.T) {
	needTools(t, "xvfb weston wl-clipboard", "Xvfb", "weston", "wl-copy", "wl-paste")
}

// startWayland starts weston with a runtime directory and socket of the
// test's own, waits for its socket, and stops it (and the clients it
// launched) at the test's end. A compositor that cannot start here skips
// the test, with weston's log, except under CI=true.
func startWayland(t *testing.T) wayland {
	t.Helper()
	needWayland(t)
	display := startXvfb(t)
	return startWeston(t, []string{"DISPLAY=" + display},
		"--backend=x11-backend.so", "--use-pixman", "--width=320", "--height=200")
}

// startWeston runs weston with args (its backend's) and env besides the
// runtime directory, as startWayland says.
func startWeston(t *testing.T, env []string, args ...string) wayland {
	t.Helper()
	// Not t.TempDir: a unix socket's path has a 108-byte limit.
	dir, err := os.MkdirTemp("", "corvid-wl-")
	must(t, err)
	must(t, os.Chmod(dir, 0o700))
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	w := wayland{runtimeDir: dir, log: filepath.Join(t.TempDir(), "weston.log")}
	cmd := exec.Command("weston", append(args, "--socket="+waylandSocket, "--no-config", "--idle-time=0", "--log="+w.log)...)
	cmd.Env = append(append(withoutDisplays(os.Environ()), env...), "XDG_RUNTIME_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := os.Create(w.log + ".out") // what it writes before its log opens
	must(t, err)
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	must(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	sock := filepath.Join(dir, waylandSocket)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return w
		}
		select {
		case <-exited:
			cannotStart(t, w, "weston exited")
		default:
		}
		if time.Now().After(deadline) {
			cannotStart(t, w, "weston's socket did not appear in 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func cannotStart(t *testing.T, w wayland, why string) {
	t.Helper()
	early, _ := os.ReadFile(w.log + ".out")
	log, _ := os.ReadFile(w.log)
	log = append(early, log...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("the Wayland compositor cannot start: %s; its log:\n%s", why, log)
	}
	t.Skipf("the Wayland compositor cannot start here: %s; its log:\n%s", why, log)
}

// withoutDisplays is env without the variables that name a display or a
// Wayland runtime: each process here gets only the ones set for it.
func withoutDisplays(env []string) []string {
	var out []string
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		switch k {
		case "DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "XDG_RUNTIME_DIR":
			continue
		}
		out = append(out, e)
	}
	return out
}

// setWaylandClipboard puts data on the compositor's clipboard with
// wl-copy as the type named (always named: without one, wl-copy guesses
// with other tools), and waits until wl-paste lists it. wl-copy stays in
// the background, serving it, until another copy or the compositor ends.
func setWaylandClipboard(t *testing.T, w wayland, mime string, data []byte) {
	t.Helper()
	cmd := exec.Command("wl-copy", "--type", mime)
	cmd.Env = append(withoutDisplays(os.Environ()), w.env()...)
	runCopyTool(t, cmd, data)
	waitListed(t, w, mime)
}

// waitListed waits until wl-paste lists mime on the clipboard.
func waitListed(t *testing.T, w wayland, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		list := exec.Command("wl-paste", "--list-types")
		list.Env = append(withoutDisplays(os.Environ()), w.env()...)
		out, err := list.CombinedOutput()
		if err == nil && strings.Contains("\n"+string(out), "\n"+want+"\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("wl-paste --list-types does not list %s after wl-copy: %v\n%s", want, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Ctrl+V with a PNG on the Wayland clipboard: the input shows the
// placeholder, and the agent gets the very bytes as an image/png block.
func TestCtrlVSendsTheWaylandClipboardsPNG(t *testing.T) {
	w := startWayland(t)
	shot := screenshot(t)
	setWaylandClipboard(t, w, "image/png", shot)
	ctrlVSendsTheClipboard(t, w.env(), shot)
}

// Each Ctrl+V on Wayland that attaches nothing says why in one line, and
// the input goes on taking keys: nothing copied yet, text on the
// clipboard, HTML served as image/png, and an image over 8 MB. The prompt
// sent then holds no image.
func TestCtrlVWithoutAnImageOnWaylandSaysWhyAndTypingGoesOn(t *testing.T) {
	w := startWayland(t)
	big := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 9<<20)...)
	for _, tc := range []struct {
		name, mime string
		data       []byte // nil: copy nothing
		want       string
	}{
		{"nothing copied", "", nil, "! nothing attached: the clipboard holds no image (wl-paste: No selection)"},
		{"text", "text/plain;charset=utf-8", []byte("just some text\n"), "! nothing attached: the clipboard holds no image\n"},
		{"HTML as a PNG", "image/png", []byte("<html>not a png</html>"), "is not one (its bytes are not PNG"},
		{"over 8 MB", "image/png", big, "! nothing attached: the clipboard's image is over 8 MB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.data != nil {
				setWaylandClipboard(t, w, tc.mime, tc.data)
			}
			ctrlVAttachesNothing(t, w.env(), imagesModel, tc.want)
		})
	}
}

// A clipboard owner that never answers, made with the real tools: a
// wl-copy (in the foreground, so its pid is known) stopped with SIGSTOP
// once the compositor lists its type. wl-paste then waits on it for ever
// (wl-paste 2.1 reads the offer through a `cat` of its own); the input
// stays usable, the read is given up after 2 s with a note, and wl-paste
// is killed with its cat.
func TestCtrlVWithAStoppedWaylandClipboardOwnerKeepsTheUIResponsive(t *testing.T) {
	w := startWayland(t)
	owner := exec.Command("wl-copy", "--foreground", "--type", "image/png")
	owner.Env = append(withoutDisplays(os.Environ()), w.env()...)
	owner.Stdin = bytes.NewReader(screenshot(t))
	must(t, owner.Start())
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Process.Signal(syscall.SIGCONT); _ = owner.Wait() })
	waitListed(t, w, "image/png")
	must(t, owner.Process.Signal(syscall.SIGSTOP))
	s := newSession(t)
	tm := s.open(120, 24, w.env(), "tui", "-m", s.script("img.json", imagesModel))
	tm.ready()
	typesWhileTheClipboardIsRead(t, tm)
	// Both run while the read is under way: the check below that they are
	// gone then says something.
	for _, comm := range []string{"wl-paste", "cat"} {
		tm.waitUntil(comm+" reading the stopped owner's offer", func(scr string) bool {
			if strings.Contains(scr, "did not answer") {
				t.Fatalf("no %s seen before the read was given up", comm)
			}
			return len(clientsOf(t, w, comm)) > 0
		})
	}
	tm.waitFor("! nothing attached: the clipboard tool (wl-paste) did not answer in 2s")
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := append(clientsOf(t, w, "wl-paste"), clientsOf(t, w, "cat")...)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("wl-paste or its cat (pids %v) still runs after the timeout", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clientsOf lists the running processes named comm whose environment
// holds the compositor's runtime directory (Linux /proc).
func clientsOf(t *testing.T, w wayland, comm string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		name, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		environ, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if strings.TrimSpace(string(name)) == comm && bytes.Contains(environ, []byte("XDG_RUNTIME_DIR="+w.runtimeDir+"\x00")) && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// On a compositor without a seat (weston's headless backend: a real
// one, where no clipboard can be read) Ctrl+V says the clipboard could
// not be read, in wl-paste's words, not that it holds no image, and
// typing goes on.
func TestCtrlVOnAWaylandWithoutASeatSaysTheClipboardCannotBeRead(t *testing.T) {
	needWayland(t)
	w := startWeston(t, nil, "--backend=headless-backend.so")
	s := newSession(t)
	tm := s.open(120, 24, w.env(), "tui", "-m", s.script("img.json", imagesModel))
	tm.ready()
	tm.keys("C-v")
	tm.waitFor("! nothing attached: the clipboard could not be read (wl-paste: Missing a seat)")
	tm.typeText("still here")
	tm.waitFor("› still here")
	if strings.Contains(tm.all(), "holds no image") {
		t.Errorf("a clipboard that could not be read is said to hold no image:\n%s", tm.all())
	}
}
