package conformance

import (
	"os"
	"path/filepath"
	"strings"
)

func writeFile(dir, name, body string) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600)
}

// checkClientCaps advertises no client capabilities and runs a turn that reads a
// file, writes one and runs a command (the "tools" script when scripted), answering
// every permission request allow_once. No fs/*, terminal/* or elicitation/* request
// may arrive.
func checkClientCaps(c *checkRun) {
	if err := writeFile(c.ws.cwd, "input.txt", "conformance input\n"); err != nil {
		c.failAll(c.reqs, "%v", err)
		return
	}
	a, sid, t, ok := c.textTurn()
	if !ok {
		return
	}
	var forbidden []string
	perms := 0
	for _, m := range a.requestsSeen() {
		switch {
		case m.Method == "session/request_permission":
			perms++
		case strings.HasPrefix(m.Method, "fs/"), strings.HasPrefix(m.Method, "terminal/"), strings.HasPrefix(m.Method, "elicitation/"):
			forbidden = append(forbidden, m.Method)
		}
	}
	tools := 0
	for _, m := range t.during {
		if s, kind := m.update(); s == sid && kind == "tool_call" {
			tools++
		}
	}
	if len(forbidden) > 0 {
		c.fail("client-capabilities.none-used", "the client advertised nothing, yet the agent sent %s", strings.Join(forbidden, ", "))
	} else {
		c.pass("client-capabilities.none-used", "%d tool call(s), %d permission request(s) answered allow_once, no fs/terminal/elicitation request; stopReason %s", tools, perms, t.stop)
	}
	var missing []string
	for _, f := range []string{"out.txt", "shell.txt"} {
		if _, err := os.Stat(filepath.Join(c.ws.cwd, f)); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		c.fail("client-capabilities.tools-in-process", "not in the workspace after the turn: %s", strings.Join(missing, ", "))
	} else {
		c.pass("client-capabilities.tools-in-process", "out.txt and shell.txt written in %s", c.ws.cwd)
	}
}
