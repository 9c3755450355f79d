package commands

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
)

func TestWatcherFiresOnAddModifyAndRemove(t *testing.T) {
	top := t.TempDir()
	cwd := filepath.Join(top, "repo")
	env := config.MapEnv{"XDG_CONFIG_HOME": filepath.Join(top, "xdg")}
	writeFiles(t, top, map[string]string{"repo/.git/HEAD": "", "repo/.corvid/commands/a.md": "a\n"})

	changes := make(chan struct{}, 16)
	w := Watch(context.Background(), cwd, env, 20*time.Millisecond, func() { changes <- struct{}{} })
	defer w.Stop()

	expect := func(what string) {
		t.Helper()
		select {
		case <-changes:
		case <-time.After(5 * time.Second):
			t.Fatalf("no change reported after %s", what)
		}
	}
	// unchanged checks, without waiting for a poll that should not fire, that what
	// the watcher compares stays the same across a step.
	unchanged := func(what string, step func()) {
		t.Helper()
		before := fingerprint(cwd, env)
		step()
		if !sameFingerprint(before, fingerprint(cwd, env)) {
			t.Fatalf("%s changes what the watcher compares", what)
		}
	}

	unchanged("nothing happening", func() {})

	writeFiles(t, top, map[string]string{"repo/.corvid/commands/sub/b.md": "b\n"})
	expect("adding a command in a subfolder")

	writeFiles(t, top, map[string]string{"xdg/corvid/skills/s/SKILL.md": "---\nname: s\n---\n"})
	expect("adding a user skill")

	a := filepath.Join(cwd, ".corvid", "commands", "a.md")
	if err := os.WriteFile(a, []byte("a, changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(a, future, future); err != nil {
		t.Fatal(err)
	}
	expect("modifying a command")

	unchanged("adding a non-markdown file", func() {
		writeFiles(t, top, map[string]string{"repo/.corvid/commands/ignored.txt": "x"})
	})

	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	expect("removing a command")

	if err := os.Rename(filepath.Join(top, "xdg", "corvid", "skills", "s"), filepath.Join(top, "xdg", "corvid", "skills", "t")); err != nil {
		t.Fatal(err)
	}
	expect("renaming a skill folder")
}

func TestWatcherStopsWithItsContext(t *testing.T) {
	top := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	fired := make(chan struct{}, 1)
	w := Watch(ctx, top, config.MapEnv{"XDG_CONFIG_HOME": top}, 20*time.Millisecond, func() { fired <- struct{}{} })
	cancel()
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		t.Fatal("watcher still running after its context was cancelled")
	}
	w.Stop() // safe after the context ended, and twice
	w.Stop()
	// done is closed when the only goroutine that calls onChange has returned, so
	// nothing can fire after this point; a change made now must go unreported.
	writeFiles(t, top, map[string]string{".corvid/commands/x.md": "x"})
	select {
	case <-fired:
		t.Fatal("onChange called after the watcher stopped")
	default:
	}
}
