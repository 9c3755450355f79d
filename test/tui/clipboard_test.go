package tui_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl+V in the TUI against a real X clipboard: Debian's Xvfb (an X
// server without a screen) and xclip, which .ci/run installs. xclip puts
// the bytes on the clipboard as a screenshot tool does, and the TUI reads
// them back with xclip as it would on a desktop.

// needX skips without Xvfb and xclip, except under CI=true, where a
// missing one fails: CI cannot pass by skipping.
func needX(t *testing.T) { needTools(t, "xvfb xclip", "Xvfb", "xclip") }

// needTools skips without one of tools, except under CI=true, where a
// missing one fails; packages are Debian's that hold them.
func needTools(t *testing.T, packages string, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (.ci/run installs %s)", tool, packages)
			}
			t.Skipf("%s is not installed (apt-get install %s)", tool, packages)
		}
	}
}

// startX starts Xvfb on a free display (it picks one and writes its
// number, -displayfd) and returns DISPLAY's value.
func startX(t *testing.T) string {
	t.Helper()
	needX(t)
	return startXvfb(t)
}

// startXvfb is startX without the check for xclip: the Wayland tests
// run their compositor on an Xvfb of their own.
func startXvfb(t *testing.T) string {
	t.Helper()
	r, w, err := os.Pipe()
	must(t, err)
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-nolisten", "tcp", "-screen", "0", "320x200x24")
	cmd.ExtraFiles = []*os.File{w}
	must(t, cmd.Start())
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	select {
	case n := <-got:
		if _, err := strconv.Atoi(n); err != nil {
			t.Fatalf("Xvfb named no display (%q)", n)
		}
		return ":" + n
	case <-time.After(20 * time.Second):
		t.Fatal("Xvfb did not start in 20 s")
	}
	return ""
}

// setClipboard puts data on the display's clipboard with xclip, as the
// type named (xclip stays in the background, serving it, until the X
// server ends).
func setClipboard(t *testing.T, display, mime string, data []byte) {
	t.Helper()
	args := []string{"-selection", "clipboard"}
	if mime != "" {
		args = append(args, "-t", mime)
	}
	cmd := exec.Command("xclip", append(args, "-i")...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	runCopyTool(t, cmd, data)
}

// typesWhileTheClipboardIsRead presses Ctrl+V on a clipboard whose tool
// does not answer, then types: the text must be drawn while the read is
// still under way (a UI waiting for the tool would draw it only once the
// read ended, with the status line's note gone).
func typesWhileTheClipboardIsRead(t *testing.T, tm *tmuxTerm) {
	t.Helper()
	tm.keys("C-v")
	tm.waitFor("reading the clipboard")
	tm.typeText("typing meanwhile")
	tm.waitUntil("the typed text while the clipboard is read", func(string) bool {
		scr := tm.screen()
		if strings.Contains(scr, "did not answer") {
			t.Fatalf("the typed text was not drawn before the read ended:\n%s", scr)
		}
		return strings.Contains(scr, "› typing meanwhile") && strings.Contains(scr, "reading the clipboard")
	})
}

// runCopyTool runs cmd, a clipboard tool that copies data from its stdin
// and stays in the background serving it (xclip -i, wl-copy). Its output
// goes to a file, not a pipe: the tool left serving would hold a pipe
// open, and the wait for it with it.
func runCopyTool(t *testing.T, cmd *exec.Cmd, data []byte) {
	t.Helper()
	cmd.Stdin = bytes.NewReader(data)
	errFile, err := os.CreateTemp(t.TempDir(), "copy")
	must(t, err)
	defer errFile.Close()
	cmd.Stdout, cmd.Stderr = errFile, errFile
	if err := cmd.Run(); err != nil {
		out, _ := os.ReadFile(errFile.Name())
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}

// screenshot is a real PNG, as Go's encoder writes one.
func screenshot(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for x := range 64 {
		for y := range 48 {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 5), 200, 255})
		}
	}
	var b bytes.Buffer
	must(t, png.Encode(&b, img))
	return b.Bytes()
}

const imagesModel = `{"images": true, "onExhausted": "repeat-last", "responses": [{"parts": [{"type": "text", "text": "Seen."}]}]}`

// storedImages are the image blocks of the session's stored events
// (what reached the agent), as the export writes them.
func storedImages(t *testing.T, s *session) []map[string]any {
	t.Helper()
	id := firstSessionID(t, runCorvid(t, s, "sessions", "list"))
	var out []map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "image" {
				out = append(out, v)
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, line := range strings.Split(runCorvid(t, s, "sessions", "export", "--format", "jsonl", id), "\n") {
		var v any
		if json.Unmarshal([]byte(line), &v) == nil {
			walk(v)
		}
	}
	return out
}

// Ctrl+V with a PNG on the X clipboard: the input shows the
// placeholder, and the agent gets the very bytes as an image/png block.
func TestCtrlVSendsTheClipboardsPNG(t *testing.T) {
	display := startX(t)
	shot := screenshot(t)
	setClipboard(t, display, "image/png", shot)
	ctrlVSendsTheClipboard(t, []string{"DISPLAY=" + display}, shot)
}

// ctrlVSendsTheClipboard opens the TUI in a terminal with env (the
// display it reads the clipboard from), presses Ctrl+V, sends the prompt,
// and checks the agent got the clipboard's bytes, shot, as a PNG block.
func ctrlVSendsTheClipboard(t *testing.T, env []string, shot []byte) {
	t.Helper()
	s := newSession(t)
	tm := s.open(100, 24, env, "tui", "-m", s.script("img.json", imagesModel))
	tm.ready()
	tm.typeText("what is in ")
	tm.keys("C-v")
	tm.waitFor("what is in [image 1: " + strconv.Itoa((len(shot)+1023)/1024) + " KB png]")
	tm.typeText(" ?")
	tm.waitFor("png] ?")
	tm.keys("Enter")
	tm.waitFor("Seen.")
	tm.idle()
	tm.keys("C-d")
	tm.waitFor("EXIT=0")
	// The store keeps the prompt as shown and as the model got it: the
	// image is in both, and each must be the clipboard's.
	imgs := storedImages(t, s)
	if len(imgs) == 0 {
		t.Fatal("the agent got no image block")
	}
	for _, img := range imgs {
		data, _ := img["data"].(string)
		got, err := base64.StdEncoding.DecodeString(data)
		if err != nil || !bytes.Equal(got, shot) {
			t.Errorf("the image's bytes differ from the clipboard's (%d bytes, want %d; %v)", len(got), len(shot), err)
		}
		if mime := img["mimeType"]; mime != "image/png" {
			t.Errorf("mimeType = %v, want image/png; the block: %v", mime, img)
		}
	}
}

// Each Ctrl+V that attaches nothing says why in one line, and the input
// goes on taking keys: text on the clipboard, an image over 8 MB, bytes
// that claim to be a PNG and are not, and a model without images. The
// prompt sent then holds no image.
func TestCtrlVWithoutAnImageSaysWhyAndTypingGoesOn(t *testing.T) {
	display := startX(t)
	big := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 9<<20)...)
	for _, tc := range []struct {
		name, mime string
		data       []byte
		model      string
		want       string
	}{
		{"text", "", []byte("just some text\n"), imagesModel, "! nothing attached: the clipboard holds no image"},
		{"over 8 MB", "image/png", big, imagesModel, "! nothing attached: the clipboard's image is over 8 MB"},
		{"not a PNG", "image/png", []byte("<html>not a png</html>"), imagesModel, "is not one (its bytes are not PNG"},
		{"no images", "image/png", screenshot(t), `{"responses": [{"parts": [{"type": "text", "text": "Seen."}]}]}`, "! nothing attached: the model takes no images"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setClipboard(t, display, tc.mime, tc.data)
			ctrlVAttachesNothing(t, []string{"DISPLAY=" + display}, tc.model, tc.want)
		})
	}
}

// ctrlVAttachesNothing opens the TUI on model in a terminal with env,
// presses Ctrl+V between two words, and checks it says want, the typing
// goes on, and the prompt sent holds no image.
func ctrlVAttachesNothing(t *testing.T, env []string, model, want string) {
	t.Helper()
	s := newSession(t)
	tm := s.open(120, 24, env, "tui", "-m", s.script("m.json", model))
	tm.ready()
	tm.typeText("before ")
	tm.keys("C-v")
	tm.waitFor(want)
	tm.typeText("after")
	tm.waitFor("› before after")
	tm.keys("Enter")
	tm.waitFor("Seen.")
	tm.idle()
	if imgs := storedImages(t, s); len(imgs) != 0 {
		t.Errorf("the agent got %d image blocks", len(imgs))
	}
}

// Without a display (over SSH) Ctrl+V says there is no clipboard to
// read, at once, and typing goes on.
func TestCtrlVWithoutADisplaySaysSo(t *testing.T) {
	s := newSession(t)
	tm := s.open(120, 24, nil, "tui", "-m", s.script("img.json", imagesModel))
	tm.ready()
	tm.keys("C-v")
	tm.waitFor("! nothing attached: no graphical session (neither WAYLAND_DISPLAY nor DISPLAY is set")
	tm.typeText("still here")
	tm.waitFor("› still here")
}

// With DISPLAY naming an X server that is not there (an SSH session's
// forwarding gone) Ctrl+V says the clipboard could not be read, in
// xclip's words, not that it holds no image; with a display whose
// clipboard nothing was ever copied to, that it holds none.
func TestCtrlVWithAnUnreachableDisplaySaysTheClipboardCannotBeRead(t *testing.T) {
	needX(t)
	gone := ":" + strconv.Itoa(900+os.Getpid()%90)
	if _, err := os.Stat("/tmp/.X11-unix/X" + gone[1:]); err == nil {
		t.Skipf("display %s exists here", gone)
	}
	empty := startX(t)
	for _, tc := range []struct{ display, want string }{
		{gone, "! nothing attached: the clipboard could not be read (xclip: Error: Can't open display: " + gone + ")"},
		{empty, "! nothing attached: the clipboard holds no image (xclip: Error: target TARGETS not available)"},
	} {
		s := newSession(t)
		tm := s.open(140, 24, []string{"DISPLAY=" + tc.display}, "tui", "-m", s.script("img.json", imagesModel))
		tm.ready()
		tm.keys("C-v")
		tm.waitFor(tc.want)
		tm.typeText("still here")
		tm.waitFor("› still here")
	}
}

// A clipboard tool that never answers (a fake xclip first on PATH, the
// only fake here: a real one cannot be made to hang) leaves the input
// usable, is given up after 2 s with a note, and is killed with what it
// started.
func TestCtrlVWithAHangingClipboardToolKeepsTheUIResponsive(t *testing.T) {
	s := newSession(t)
	fake := t.TempDir()
	pidFile := filepath.Join(fake, "sleep.pid")
	must(t, os.WriteFile(filepath.Join(fake, "xclip"), []byte("#!/bin/sh\nsleep 60 &\necho $! > "+shellQuote(pidFile)+"\nwait\n"), 0o755))
	var env []string
	for _, e := range s.env {
		if p, ok := strings.CutPrefix(e, "PATH="); ok {
			e = "PATH=" + fake + string(os.PathListSeparator) + p
		}
		env = append(env, e)
	}
	s.env = env
	tm := s.open(120, 24, []string{"DISPLAY=:99"}, "tui", "-m", s.script("img.json", imagesModel))
	tm.ready()
	typesWhileTheClipboardIsRead(t, tm)
	tm.waitFor("! nothing attached: the clipboard tool (xclip) did not answer in 2s")
	b, err := os.ReadFile(pidFile)
	must(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	must(t, err)
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the fake xclip's child (pid %d) still runs after the timeout", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive tells whether pid runs (a zombie waiting to be reaped does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true // no /proc: Kill said it runs
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}
