package commands

import (
	"context"
	"io/fs"
	"sync"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
)

// Watcher polls the command and skill folders of one working directory.
// Polling (names, sizes and modification times) needs no new dependency and
// no OS watch handles, and these folders hold a handful of small files.
type Watcher struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// Watch starts polling the folders Discover reads, every `every` (at least
// 10ms), and calls onChange when a command or SKILL.md file is added,
// removed, renamed or modified. The first state is taken before Watch
// returns, so any later change is seen. onChange runs on the watcher's
// goroutine, one call at a time; it should re-run Discover. Polling stops
// when ctx is done or Stop is called.
func Watch(ctx context.Context, cwd string, env config.Env, every time.Duration, onChange func()) *Watcher {
	if every < 10*time.Millisecond {
		every = 10 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{cancel: cancel, done: make(chan struct{})}
	last := fingerprint(cwd, env)
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			now := fingerprint(cwd, env)
			if !sameFingerprint(last, now) {
				last = now
				if onChange != nil && ctx.Err() == nil {
					onChange()
				}
			}
		}
	}()
	return w
}

// Stop ends polling and waits for a running onChange to return. It is safe
// to call more than once, but not from inside onChange.
func (w *Watcher) Stop() {
	w.once.Do(w.cancel)
	<-w.done
}

type fileState struct {
	size int64
	mod  time.Time
}

// fingerprint is the state of every file Discover would read, by path.
func fingerprint(cwd string, env config.Env) map[string]fileState {
	fp := map[string]fileState{}
	add := func(path string, info fs.FileInfo) {
		fp[path] = fileState{size: info.Size(), mod: info.ModTime()}
	}
	for _, r := range roots(cwd, env) {
		if r.skills {
			skillFiles(r.dir, add)
		} else {
			commandFiles(r.dir, func(path, _ string, info fs.FileInfo) { add(path, info) })
		}
	}
	return fp
}

func sameFingerprint(a, b map[string]fileState) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || w.size != v.size || !w.mod.Equal(v.mod) {
			return false
		}
	}
	return true
}
