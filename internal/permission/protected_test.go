package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/corvid-agent/corvid/internal/tool"
)

func TestProtectedPathsAskInEditModeAndUnderAllow(t *testing.T) {
	f := newFixture(t)
	home := f.outside
	t.Setenv("HOME", home)
	// A link inside the workspace to a hook counts as the hook.
	hooks := filepath.Join(f.root, ".git", "hooks")
	os.MkdirAll(hooks, 0o755)
	os.Symlink(filepath.Join(hooks, "pre-commit"), filepath.Join(f.root, "innocent.sh"))
	for _, p := range []string{
		filepath.Join(f.root, ".corvid", "config.toml"),
		filepath.Join(f.root, ".git", "hooks", "pre-commit"),
		filepath.Join(f.root, "vendor", "x", ".git", "config"),
		filepath.Join(f.root, "innocent.sh"),
		filepath.Join(home, ".bashrc"),
		filepath.Join(home, ".ssh", "authorized_keys"),
		filepath.Join(home, ".config", "corvid", "config.toml"),
	} {
		roots := []string{f.root, home} // even where the home is a root
		for name, in := range map[string]Input{
			"edit mode":     {Tool: "write", Preview: write(p), Roots: roots, Mode: ModeEdit},
			"--allow write": {Tool: "write", Preview: write(p), Roots: roots, Allow: []string{"write"}},
			"allow rule":    {Tool: "edit", Preview: write(p), Roots: roots, Rules: rules(t, []string{"edit"}, nil, nil)},
		} {
			if d := Decide(in); d.Action != Ask {
				t.Errorf("%s, %s: %v (%s), want ask", p, name, d.Action, d.Reason)
			}
		}
	}
	// Not protected: ordinary files, and names that merely contain .git.
	for _, p := range []string{filepath.Join(f.root, "main.go"), filepath.Join(f.root, ".gitignore"), filepath.Join(f.root, "x.git")} {
		in := Input{Tool: "write", Preview: write(p), Roots: []string{f.root}, Mode: ModeEdit}
		if d := Decide(in); d.Action != Allow {
			t.Errorf("%s in edit mode: %v (%s), want allow", p, d.Action, d.Reason)
		}
	}
	// Reads of protected paths inside the workspace still run; yolo writes.
	if d := Decide(Input{Tool: "read", Preview: read(filepath.Join(f.root, ".git", "config")), Roots: []string{f.root}}); d.Action != Allow {
		t.Errorf("read .git/config: %v", d.Action)
	}
	if d := Decide(Input{Tool: "write", Preview: tool.Preview{Access: tool.AccessWrite, Paths: []string{filepath.Join(f.root, ".git", "x")}}, Roots: []string{f.root}, Yolo: true}); d.Action != Allow {
		t.Errorf("yolo write .git/x: %v", d.Action)
	}
}

func TestDanglingLinkOutsideIsNotInside(t *testing.T) {
	f := newFixture(t)
	link := filepath.Join(f.root, "dangling")
	os.Symlink(filepath.Join(f.outside, "authorized_keys"), link)
	for name, in := range map[string]Input{
		"edit mode":     {Tool: "write", Preview: write(link), Roots: []string{f.root}, Mode: ModeEdit},
		"--allow write": {Tool: "write", Preview: write(link), Roots: []string{f.root}, Allow: []string{"write"}},
	} {
		if d := Decide(in); d.Action != Ask {
			t.Errorf("%s: write through a dangling link to outside: %v (%s), want ask", name, d.Action, d.Reason)
		}
	}
}
