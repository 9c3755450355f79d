package tui

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// clipboardTimeout bounds each clipboard tool's run: Ctrl+V reads the
// clipboard off the event loop, and a tool that never answers (a
// clipboard owner that hangs, a display gone) is killed then.
const clipboardTimeout = 2 * time.Second

// clipImage is an image read from the clipboard: its bytes and the type
// they are (sniffImage), whatever the clipboard claimed.
type clipImage struct {
	data []byte
	mime string
}

// clipboardReader reads an image from the system clipboard. The model
// runs it in a command, never in Update.
type clipboardReader interface {
	readImage(ctx context.Context) (clipImage, error)
}

// clipError is why nothing was attached, in words for the user;
// timeout says a tool did not answer in time.
type clipError struct {
	reason  string
	timeout bool
}

func (e *clipError) Error() string { return e.reason }

func clipErr(format string, args ...any) error {
	return &clipError{reason: fmt.Sprintf(format, args...)}
}

func clipTimedOut(err error) bool {
	var ce *clipError
	return errors.As(err, &ce) && ce.timeout
}

// errClipTooLarge is an image over maxImageBytes.
var errClipTooLarge = clipErr("the clipboard's image is over %d MB", maxImageBytes>>20)

// clipTargets are the image types taken from a clipboard, PNG first: a
// screenshot tool offers PNG, and a browser often several types at once.
var clipTargets = []string{"image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp"}

// systemClipboard reads the clipboard with the platform's tool: on Linux
// wl-paste under Wayland, else xclip under X11; osascript on macOS. It
// runs the tool in a process group of its own, without the terminal,
// reads at most maxImageBytes+1 bytes of its output and kills it then,
// or at the context's end.
type systemClipboard struct {
	goos     string
	getenv   func(string) string
	lookPath func(string) (string, error)
}

func (c systemClipboard) readImage(ctx context.Context) (clipImage, error) {
	var data []byte
	var err error
	switch {
	case c.goos == "darwin":
		data, err = c.macImage(ctx)
	case c.goos == "windows":
		return clipImage{}, clipErr("reading an image from the clipboard is not built on Windows; paste the image file's path")
	case c.getenv("WAYLAND_DISPLAY") != "" && c.has("wl-paste"):
		data, err = c.listedImage(ctx, "wl-paste", []string{"--list-types"}, func(t string) []string { return []string{"--type", t} })
	case c.getenv("DISPLAY") != "" && c.has("xclip"):
		sel := []string{"-selection", "clipboard"}
		data, err = c.listedImage(ctx, "xclip", append(sel, "-t", "TARGETS", "-o"), func(t string) []string { return append(sel, "-t", t, "-o") })
	default:
		return clipImage{}, c.noTool()
	}
	if err != nil {
		return clipImage{}, err
	}
	if len(data) > maxImageBytes {
		return clipImage{}, errClipTooLarge
	}
	mime := sniffImage(data)
	if mime == "" {
		return clipImage{}, clipErr("what the clipboard calls an image is not one (its bytes are not PNG, JPEG, GIF or WebP)")
	}
	return clipImage{data: data, mime: mime}, nil
}

func (c systemClipboard) has(tool string) bool { _, err := c.lookPath(tool); return err == nil }

// noTool says why no clipboard can be read here.
func (c systemClipboard) noTool() error {
	switch {
	case c.getenv("WAYLAND_DISPLAY") != "" && c.getenv("DISPLAY") == "":
		return clipErr("wl-paste is not installed (package wl-clipboard): no clipboard to read")
	case c.getenv("DISPLAY") != "":
		return clipErr("xclip is not installed: no clipboard to read")
	}
	return clipErr("no graphical session (neither WAYLAND_DISPLAY nor DISPLAY is set, as over SSH): no clipboard to read")
}

// listedImage asks tool for the clipboard's types (list), and reads the
// first image type of clipTargets it offers (read(type)).
func (c systemClipboard) listedImage(ctx context.Context, tool string, list []string, read func(string) []string) ([]byte, error) {
	out, err := runClipTool(ctx, 64<<10, tool, list...)
	if err != nil {
		switch {
		case clipTimedOut(err):
			return nil, err
		case clipboardEmpty(err):
			return nil, clipErr("the clipboard holds no image (%v)", err)
		}
		return nil, clipErr("the clipboard could not be read (%v)", err)
	}
	offered := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		offered[strings.TrimSpace(l)] = true
	}
	for _, t := range clipTargets {
		if offered[t] {
			return runClipTool(ctx, maxImageBytes+1, tool, read(t)...)
		}
	}
	return nil, clipErr("the clipboard holds no image")
}

// emptyClipboard is what the tools say when nothing was copied:
// wl-paste 2.x "No selection" (1.x "Nothing is copied"), xclip when no
// program owns the clipboard. Any other failure (no seat, no display, a
// compositor gone) is one to read the clipboard, said as such.
var emptyClipboard = []string{"No selection", "Nothing is copied", "target TARGETS not available"}

func clipboardEmpty(err error) bool {
	for _, words := range emptyClipboard {
		if strings.Contains(err.Error(), words) {
			return true
		}
	}
	return false
}

// macImage reads a PNG (else JPEG, else GIF) from the macOS clipboard:
// osascript prints it as «data PNGf89504E47…», the bytes in hex.
func (c systemClipboard) macImage(ctx context.Context) ([]byte, error) {
	info, err := runClipTool(ctx, 64<<10, "osascript", "-e", "clipboard info")
	if err != nil {
		return nil, err
	}
	for _, class := range []string{"PNGf", "JPEG", "GIFf"} {
		if !strings.Contains(string(info), "«class "+class+"»") {
			continue
		}
		out, err := runClipTool(ctx, 2*(maxImageBytes+1)+64, "osascript", "-e", "the clipboard as «class "+class+"»")
		if err != nil {
			return nil, err
		}
		s := strings.TrimSpace(string(out))
		hexText, ok := strings.CutPrefix(s, "«data "+class)
		hexText, ok2 := strings.CutSuffix(hexText, "»")
		if !ok || !ok2 {
			if len(s) >= 2*(maxImageBytes+1) {
				return nil, errClipTooLarge
			}
			return nil, clipErr("osascript printed no image data")
		}
		return hex.DecodeString(hexText)
	}
	return nil, clipErr("the clipboard holds no image")
}

// runClipTool runs a clipboard tool and returns at most limit bytes of
// its output (more: it is killed, and the caller sees limit bytes). Its
// failure is told with the first line it wrote to stderr.
func runClipTool(ctx context.Context, limit int64, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	detach(cmd) // a process group of its own, without the terminal
	cmd.Cancel = func() error { killAgent(cmd); return nil }
	cmd.WaitDelay = 200 * time.Millisecond
	var stderr bytes.Buffer
	cmd.Stderr = &limitWriter{w: &stderr, n: 4 << 10}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, clipErr("%s: %v", name, err)
	}
	data, _ := io.ReadAll(io.LimitReader(out, limit))
	if int64(len(data)) == limit {
		killAgent(cmd) // read enough: the caller refuses it
		_ = cmd.Wait()
		return data, nil
	}
	err = cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, &clipError{reason: fmt.Sprintf("the clipboard tool (%s) did not answer in %s", name, clipboardTimeout), timeout: true}
	case err != nil:
		line, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if line == "" {
			line = err.Error()
		}
		return nil, clipErr("%s: %s", name, oneLine(line))
	}
	return data, nil
}

// limitWriter keeps the first n bytes written to it and drops the rest.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if k := min(len(p), l.n); k > 0 {
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
