package tool

import (
	"fmt"
	"os"
	"testing"
)

// TestMain keeps the developer's git configuration out of the tests: the
// walker reads git's global ignore file (core.excludesFile, by default
// $XDG_CONFIG_HOME/git/ignore), and so do git and rg, the oracles. Tests
// that need a configuration set their own (gitEnvOnly).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "corvid-tool-test-xdg-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
