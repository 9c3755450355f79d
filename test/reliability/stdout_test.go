package reliability

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corvid acp points fd 1 at stderr for the whole run, so a stray write to
// fd 1 reaches stderr and nothing else: the garbage collector used to
// close it once os.Stdout was replaced, and the next file opened took fd 1
// (after a long answer, SQLite's placeholder /dev/null; a file a tool
// opens could as well).
func TestFdOneStaysStderrThroughALongAnswer(t *testing.T) {
	needProc(t)
	st := newStore(t, map[string]any{"responses": []any{
		map[string]any{"chunkSize": 4096, "parts": []any{
			map[string]any{"type": "text", "text": strings.Repeat("x", 99) + "\n", "repeat": 40000}}},
	}})
	a := st.start(t)
	sid := a.newSession(t)
	if stop, rerr := a.Prompt(a.ctx, sid, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	fd := filepath.Join("/proc", strconv.Itoa(a.PID()), "fd")
	one, err1 := os.Readlink(filepath.Join(fd, "1"))
	two, err2 := os.Readlink(filepath.Join(fd, "2"))
	if err1 != nil || err2 != nil || one != two {
		t.Errorf("after a 4 MB answer fd 1 is %q (%v), fd 2 %q (%v): want both stderr", one, err1, two, err2)
	}
}
