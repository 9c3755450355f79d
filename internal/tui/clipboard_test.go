package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Where no clipboard tool can run, Ctrl+V says why without running one.
func TestClipboardSaysWhyNoToolCanReadIt(t *testing.T) {
	for _, tc := range []struct {
		goos, wayland, display string
		tools                  []string
		want                   string
	}{
		{"linux", "", "", []string{"xclip", "wl-paste"}, "no graphical session (neither WAYLAND_DISPLAY nor DISPLAY is set, as over SSH)"},
		{"linux", "", ":0", nil, "xclip is not installed"},
		{"linux", "wayland-0", "", []string{"xclip"}, "wl-paste is not installed (package wl-clipboard)"},
		{"linux", "wayland-0", ":0", nil, "xclip is not installed"},
		{"windows", "", "", nil, "not built on Windows"},
	} {
		c := systemClipboard{goos: tc.goos,
			getenv: func(k string) string {
				return map[string]string{"WAYLAND_DISPLAY": tc.wayland, "DISPLAY": tc.display}[k]
			},
			lookPath: func(name string) (string, error) {
				for _, t := range tc.tools {
					if t == name {
						return "/nonexistent/" + name, nil
					}
				}
				return "", errors.New("not found")
			}}
		_, err := c.readImage(context.Background())
		var ce *clipError
		if !errors.As(err, &ce) || !strings.Contains(ce.reason, tc.want) {
			t.Errorf("%s wayland=%q display=%q tools=%q: %v; want %q", tc.goos, tc.wayland, tc.display, tc.tools, err, tc.want)
		}
	}
}

// The bytes decide an image's type; anything else is none.
func TestSniffImage(t *testing.T) {
	for in, want := range map[string]string{
		"\x89PNG\r\n\x1a\nrest": "image/png", "\xff\xd8\xff\xdb": "image/jpeg", "GIF89a..": "image/gif",
		"GIF87a": "image/gif", "RIFF\x00\x00\x00\x00WEBPVP8 ": "image/webp", "RIFF\x00\x00\x00\x00WAVE": "",
		"<html>": "", "\x89PNG": "", "": "",
	} {
		if got := sniffImage([]byte(in)); got != want {
			t.Errorf("sniffImage(%q) = %q, want %q", in, got, want)
		}
	}
}
