package profile

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// seedTimeout bounds one seed command; seedMax bounds one seed's text.
const (
	seedTimeout = 30 * time.Second
	seedMax     = 64 << 10
)

// Context is what the profile adds to a session's system prompt in cwd: its
// instructions, then each seed region with what it holds. Seed commands run
// now (the agent is spawning), before any approval prompt; with
// noSeedCommands each command seed says it was refused instead.
func (p *Profile) Context(cwd string, noSeedCommands bool) string {
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
			if noSeedCommands {
				b.WriteString("(refused: corvid was started with --no-seed-commands)\n")
			} else {
				b.WriteString(runSeed(cwd, s.Command))
			}
		case s.File != "":
			fmt.Fprintf(&b, "<seed region=%q file=%q>\n", s.Region, s.File)
			path := s.File
			if !filepath.IsAbs(path) {
				path = filepath.Join(cwd, path)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				fmt.Fprintf(&b, "(could not read: %v)\n", err)
			} else {
				b.WriteString(capText(string(data)))
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

func runSeed(cwd, command string) string {
	ctx, cancel := context.WithTimeout(context.Background(), seedTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = cwd
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
