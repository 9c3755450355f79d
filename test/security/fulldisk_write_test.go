package security

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Finding 10 (file part): a write or an edit on a full disk fails with an
// error that says so and leaves the user's file as it was, byte for byte,
// with no temporary file beside it. The workspace is a real tmpfs filled to
// the last page, so the failure is the kernel's ENOSPC, not an injected one.
func TestFullDiskWriteAndEditLeaveTheFileIntact(t *testing.T) {
	small := mountSmallFS(t, 1<<20)
	rtBinary(t) // build first: rtStart's deadline starts before it builds
	ws := filepath.Join(small, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	// One file per tool, so each is proven on its own.
	var orig strings.Builder
	for orig.Len() < 16<<10 {
		orig.WriteString("original line, keep me\n")
	}
	orig.WriteString("the one line to edit\n")
	files := []string{"written.txt", "edited.txt"}
	for _, f := range files {
		putTestFile(t, filepath.Join(ws, f), orig.String())
	}

	// Each new content is far larger than the original, so a writer that
	// truncates in place has freed pages to start on and then runs out.
	big := strings.Repeat("new content that does not fit\n", 4096)
	script := rtScript(t,
		rtTool("write", map[string]any{"path": "written.txt", "content": big}),
		rtTool("edit", map[string]any{"path": "edited.txt", "old_string": "the one line to edit\n", "new_string": big}),
		rtText("done"))
	c := rtStart(t, script, testkit.Options{Dir: ws}, "--yolo")
	sid := c.newSessionIn(t, ws)
	fill(t, small)

	stop, rerr := c.Prompt(c.ctx, sid, "rewrite both files")
	if rerr != nil || stop != "end_turn" {
		t.Fatalf("turn: %q %v\nstderr:\n%s", stop, rerr, c.Stderr())
	}
	a := &fileAgent{Editor: c.Editor, sid: sid}
	results := a.toolResults()
	if len(results) != 2 {
		t.Fatalf("want 2 tool calls (write, edit), got %d:\n%s", len(results), c.toolOutput(sid))
	}
	for i, name := range []string{"write", "edit"} {
		r := results[i]
		if r.status != "failed" || !strings.Contains(strings.ToLower(r.text), "no space") {
			t.Errorf("%s on a full disk: status %q, text %q; want failed with an error saying there is no space", name, r.status, fileTail(r.text, 300))
		}
	}

	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(ws, f))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != orig.String() {
			t.Errorf("%s changed on a full disk: %d bytes, starting %q; want the original %d bytes", f, len(got), got[:min(len(got), 40)], orig.Len())
		}
	}
	entries, err := os.ReadDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != files[0] && e.Name() != files[1] {
			t.Errorf("left behind in the workspace: %s", e.Name())
		}
	}
}
