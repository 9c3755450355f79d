package profile

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// seedTimeout bounds one seed command; seedMax bounds one seed's text.
const (
	seedTimeout = 30 * time.Second
	seedMax     = 64 << 10
)

// Spawn is the session a profile's context is made for.
type Spawn struct {
	Cwd string
	// NoCommands refuses every command seed (--no-seed-commands).
	NoCommands bool
	// ReadFile reads a file seed (its path as written, relative to Cwd)
	// under the read tool's rules: inside the session's roots with symbolic
	// links resolved, and not denied by a rule. It says why when it
	// refuses. nil: no file seed is read.
	ReadFile func(path string) (string, error)
	// Shell is the program and arguments that run a command seed (the
	// session's shell, in its sandbox when it has one); nil: sh -c.
	Shell func(cmdline string) (name string, args []string)
}

// Context is what the profile adds to a session's system prompt: its
// instructions, then each seed region with what it holds. Seed commands run
// now (the agent is spawning), before any approval prompt, so they run only
// when the profile is Trusted and sp.NoCommands is false; otherwise each
// command region says why it was refused.
func (p *Profile) Context(sp Spawn) string {
	var b strings.Builder
	if p.Instructions != "" {
		fmt.Fprintf(&b, "# Instructions of agent %s\n\n%s\n", p.Name, strings.TrimSpace(p.Instructions))
	}
	for _, s := range p.Seeds {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch {
		case s.Command != "":
			fmt.Fprintf(&b, "<seed region=%q command=%q>\n", s.Region, s.Command)
			switch {
			case sp.NoCommands:
				b.WriteString("(refused: corvid was started with --no-seed-commands)\n")
			case !p.Trusted:
				why := p.Untrusted
				if why == "" {
					why = "the profile is not trusted"
				}
				fmt.Fprintf(&b, "(refused: %s)\n", why)
			default:
				b.WriteString(runSeed(sp, s.Command))
			}
		case s.File != "":
			fmt.Fprintf(&b, "<seed region=%q file=%q>\n", s.Region, s.File)
			if sp.ReadFile == nil {
				b.WriteString("(not read: this session reads no seed files)\n")
				break
			}
			data, err := sp.ReadFile(s.File)
			if err != nil {
				fmt.Fprintf(&b, "(could not read: %v)\n", err)
			} else {
				b.WriteString(capText(data))
			}
		default:
			fmt.Fprintf(&b, "<seed region=%q>\n%s", s.Region, capText(s.Text))
		}
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		b.WriteString("</seed>\n")
	}
	return b.String()
}

func runSeed(sp Spawn, command string) string {
	ctx, cancel := context.WithTimeout(context.Background(), seedTimeout)
	defer cancel()
	name, args := "sh", []string{"-c", command}
	if sp.Shell != nil {
		name, args = sp.Shell(command)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = sp.Cwd
	out, err := cmd.CombinedOutput()
	text := capText(string(out))
	if err != nil {
		text += fmt.Sprintf("(the command failed: %v)\n", err)
	}
	return text
}

func capText(s string) string {
	if len(s) > seedMax {
		return s[:seedMax] + "\n… (truncated)\n"
	}
	return s
}
