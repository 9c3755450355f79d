package bench

// The codeMode measurement of docs/codemode.md: one scripted multi-file task
// (read 20 files, grep, edit the 3 that match) played by a fake Anthropic
// API three ways: codeMode off with one tool call per response, off with
// the calls batched as far as they can be (parallel tool use), and all
// (one script). It reports the model round trips and the tokens sent and
// generated (estimated as bytes / 4 of the request bodies and of the
// tool-call inputs; the fake model knows the task in advance, so what
// differs is the protocol's cost, not the model's skill).
//
// Run: go test -run '^$' -bench CodeModeTask -benchtime 1x ./test/bench/

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	fa "github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

const taskFiles = 20

// taskEdited are the files that call oldName.
var taskEdited = []int{3, 11, 17}

func taskPath(i int) string { return fmt.Sprintf("pkg/f%02d.go", i) }

// writeTask fills a workspace with 20 Go files of ~60 lines; three call oldName.
func writeTask(tb testing.TB, dir string) {
	tb.Helper()
	_ = os.MkdirAll(filepath.Join(dir, "pkg"), 0o755)
	for i := range taskFiles {
		var b strings.Builder
		fmt.Fprintf(&b, "package pkg\n\n// File %d of the measurement task.\n\n", i)
		for f := range 8 {
			fmt.Fprintf(&b, "// helper%d_%d returns its input plus %d.\nfunc helper%d_%d(x int) int {\n\ty := x + %d\n\treturn y\n}\n\n", i, f, f, i, f, f)
		}
		for _, e := range taskEdited {
			if e == i {
				fmt.Fprintf(&b, "func caller%d() int { return oldName(%d) }\n", i, i)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, taskPath(i)), []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func use(id, name string, input any) fa.Block {
	in, _ := json.Marshal(input)
	return fa.ToolUse(id, name, string(in))
}

func readUse(i int) fa.Block {
	return use(fmt.Sprintf("toolu_r%02d", i), "read", map[string]any{"path": taskPath(i)})
}

var grepUse = use("toolu_g", "grep", map[string]any{"pattern": `oldName\(`, "path": "pkg"})

func editUse(i int) fa.Block {
	return use(fmt.Sprintf("toolu_e%02d", i), "edit", map[string]any{"path": taskPath(i), "old_string": "oldName(", "new_string": "newName(", "replace_all": true})
}

const taskScript = `lines = 0
files = glob(pattern="pkg/*.go").splitlines()
for p in files:
    lines += len(read(path=p).splitlines())
hits = grep(pattern="oldName\\(", path="pkg").splitlines()
for p in hits:
    edit(path=p, old_string="oldName(", new_string="newName(", replace_all=True)
"read %d files (%d lines); renamed oldName in %s" % (len(files), lines, ", ".join(hits))`

var done = fa.Response{Blocks: []fa.Block{fa.Text("Renamed oldName to newName in the three files that call it.")}}

// taskVariants are the three ways to play the task.
func taskVariants() []struct {
	name      string
	codeMode  string
	responses []fa.Response
} {
	var sequential, batchedReads []fa.Response
	var reads, edits []fa.Block
	for i := range taskFiles {
		sequential = append(sequential, fa.Response{Blocks: []fa.Block{readUse(i)}})
		reads = append(reads, readUse(i))
	}
	sequential = append(sequential, fa.Response{Blocks: []fa.Block{grepUse}})
	for _, i := range taskEdited {
		sequential = append(sequential, fa.Response{Blocks: []fa.Block{editUse(i)}})
		edits = append(edits, editUse(i))
	}
	sequential = append(sequential, done)
	batchedReads = []fa.Response{{Blocks: reads}, {Blocks: []fa.Block{grepUse}}, {Blocks: edits}, done}
	script := []fa.Response{{Blocks: []fa.Block{use("toolu_s", "run_script", map[string]any{"script": taskScript})}}, done}
	return []struct {
		name      string
		codeMode  string
		responses []fa.Response
	}{
		{"off-one-call-per-response", "off", sequential},
		{"off-batched", "off", batchedReads},
		{"all", "all", script},
	}
}

func BenchmarkCodeModeTask(b *testing.B) {
	bin := testkit.BuildCorvid(b)
	for _, v := range taskVariants() {
		b.Run(v.name, func(b *testing.B) {
			var reqs []fa.Request
			var outBytes int
			for b.Loop() {
				reqs, outBytes = runTask(b, bin, v.codeMode, v.responses)
			}
			inBytes := 0
			for _, r := range reqs {
				inBytes += len(r.Raw)
			}
			b.ReportMetric(float64(len(reqs)), "round-trips")
			b.ReportMetric(float64(inBytes)/4, "input-tokens")
			b.ReportMetric(float64(outBytes)/4, "output-tokens")
			b.ReportMetric(float64(len(reqs[len(reqs)-1].Raw))/4, "final-context-tokens")
		})
	}
}

// runTask plays one variant in a fresh workspace and checks the edits landed.
func runTask(b *testing.B, bin, codeMode string, responses []fa.Response) ([]fa.Request, int) {
	api := fa.New(b)
	api.Enqueue(responses...)
	outBytes := 0
	for _, r := range responses {
		for _, bl := range r.Blocks {
			outBytes += len(bl.Input) + len(bl.Text)
		}
	}
	workspace := b.TempDir()
	writeTask(b, workspace)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := testkit.Start(b, bin, testkit.Options{
		Args: []string{"acp", "-m", "anthropic:claude-sonnet-4-6", "--yolo"},
		Env:  []string{"ANTHROPIC_API_KEY=sk-ant-bench", "ANTHROPIC_BASE_URL=" + api.URL(), "CORVID_KEYRING=off", "CORVID_HOME=" + b.TempDir()},
		Dir:  workspace,
	})
	defer e.Close()
	if _, rerr := e.Initialize(ctx, testkit.Minimal()); rerr != nil {
		b.Fatal(rerr)
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	e.MustCall(ctx, "session/new", map[string]any{"cwd": workspace, "mcpServers": []any{},
		"_meta": map[string]any{"codebuddy.ai/codeMode": codeMode}}, &res)
	if stop, rerr := e.Prompt(ctx, res.SessionID, "Rename oldName to newName wherever pkg calls it; look at every file first."); rerr != nil || stop != "end_turn" {
		b.Fatalf("prompt: %q %v", stop, rerr)
	}
	for i := range taskFiles {
		body, _ := os.ReadFile(filepath.Join(workspace, taskPath(i)))
		if strings.Contains(string(body), "oldName(") {
			b.Fatalf("%s still calls oldName after the %s run", taskPath(i), codeMode)
		}
	}
	reqs := api.Requests()
	if len(reqs) != len(responses) {
		b.Fatalf("%d model requests for %d scripted responses", len(reqs), len(responses))
	}
	return reqs, outBytes
}
