package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/profile"
)

// trustCmd records a project directory as trusted, so its
// .corvid/config.toml may loosen permissions and add providers and MCP
// servers, and the seed commands of its agent files (agent.leviath,
// .corvid/agents/) may run. Each file is trusted with its content as it is
// now. Wire it into the CLI as a Trust field with the cmd:"" tag.
type trustCmd struct {
	Dir    string `arg:"" optional:"" type:"existingdir" help:"Project directory to trust (default: the one holding the nearest .corvid/, else the current directory; the current directory's agent.leviath is trusted too)."`
	List   bool   `name:"list" xor:"action" help:"List the trusted project directories and files, and whether they changed since."`
	Revoke bool   `name:"revoke" xor:"action" help:"Stop trusting the directory and the files below it (default: as for trusting)."`
}

func (c *trustCmd) Run() error {
	cwd, _ := os.Getwd()
	// The paths are a repository's names: shown, not obeyed.
	return toStdout(func(w io.Writer) error { return runTrust(config.OSEnv{}, cwd, *c, w, os.Stderr) })
}

func runTrust(env config.Env, cwd string, c trustCmd, stdout, stderr io.Writer) error {
	if c.List {
		return listTrust(env, stdout)
	}
	dir := c.Dir
	if dir == "" {
		file, err := config.Load(env, cwd)
		if err != nil {
			return err
		}
		dir = file.ProjectDir
		if dir == "" {
			dir = cwd
		}
	}
	if c.Revoke {
		was, err := config.Revoke(env, dir)
		if err != nil {
			return err
		}
		if !was {
			fmt.Fprintf(stderr, "corvid: %s was not trusted; nothing changed.\n", dir)
			return nil
		}
		fmt.Fprintf(stdout, "No longer trusted: %s. Its .corvid/config.toml may only make things stricter now, and the seed commands of its agent files do not run.\n", dir)
		return nil
	}
	files := profile.TrustCandidates(dir)
	if c.Dir == "" && filepath.Clean(cwd) != filepath.Clean(dir) {
		if own := filepath.Join(cwd, profile.LeviathFile); fileExists(own) {
			files = append(files, own)
		}
	}
	hasConfig := fileExists(filepath.Join(dir, config.ProjectConfigName))
	if !hasConfig && len(files) == 0 {
		fmt.Fprintf(stderr, "corvid: %s has no %s, %s or profile in .corvid/agents/; nothing to trust. Trust binds to a file's content: create it, then run `corvid trust` again.\n", dir, config.ProjectConfigName, profile.LeviathFile)
		return nil
	}
	if hasConfig {
		if err := config.Trust(env, dir); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Trusted %s: its .corvid/config.toml, as it is now, may allow tools, add providers and start MCP servers. If the file changes, run `corvid trust` again.\n", dir)
	}
	if err := config.TrustFiles(env, files); err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "Trusted %s: its seed commands, as the file is now, run when a session starts. If the file changes, run `corvid trust` again.\n", f)
	}
	return nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// listTrust prints the trusted projects and files, and which changed.
func listTrust(env config.Env, stdout io.Writer) error {
	ps, err := config.TrustedProjects(env)
	if err != nil {
		return err
	}
	fs, err := config.TrustedFiles(env)
	if err != nil {
		return err
	}
	if len(ps) == 0 && len(fs) == 0 {
		fmt.Fprintln(stdout, "No project is trusted.")
	}
	note := func(st config.TrustState) string {
		if st != config.Trusted {
			return "changed since trusted: ignored until `corvid trust` again"
		}
		return "trusted"
	}
	for _, p := range ps {
		fmt.Fprintf(stdout, "%s\t%s\n", p.Dir, note(p.State))
	}
	for _, f := range fs {
		fmt.Fprintf(stdout, "%s\t%s\n", f.Path, note(f.State))
	}
	return nil
}
