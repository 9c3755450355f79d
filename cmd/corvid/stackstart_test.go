package main

import (
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// internal/stackstart only helps if it grows the main goroutine's stack
// before the other packages' initialisers run on it: it must be the first
// package outside the standard library to be initialised, and come before
// the standard library's heavier ones. The runtime reports the order with
// GODEBUG=inittrace=1.
func TestStackGrownBeforeOtherPackagesInit(t *testing.T) {
	bin := testkit.BuildCorvid(t)
	env, _ := testkit.IsolatedEnv(t, "GODEBUG=inittrace=1")
	lines, _ := runInitTrace(t, bin, env)
	const pkg = "github.com/corvid-agent/corvid/internal/stackstart"
	var before []string
	for _, l := range lines {
		if l.pkg == pkg {
			t.Logf("initialised after %d packages: %s", len(before), strings.Join(before, " "))
			for _, b := range before {
				if strings.Contains(strings.SplitN(b, "/", 2)[0], ".") {
					t.Errorf("%s is initialised before %s", b, pkg)
				}
				switch b {
				case "regexp", "net/http", "crypto/tls", "reflect", "text/template", "go/token", "time":
					t.Errorf("%s is initialised before %s; its init runs on a small stack", b, pkg)
				}
			}
			return
		}
		before = append(before, l.pkg)
	}
	t.Fatalf("%s is not initialised at all (%d packages were)", pkg, len(lines))
}
