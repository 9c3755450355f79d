package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// BenchmarkLargeAnswerMemory measures what streaming one large answer costs
// in memory: a scripted model streams an answer of N MiB ($CORVID_ANSWER_MIB,
// default 40) in chunks of $CORVID_ANSWER_CHUNK characters (default 4096) to
// a client that reads every frame at once, store included, one fresh corvid
// per op. Budget (ARCHITECTURE.md §7): the process's peak RSS (VmHWM) at most
// the idle baseline (VmHWM after session/new) plus 2× the answer.
//
// Metrics: MiB-idle and MiB-hwm (the largest over the ops) and answer-x,
// (MiB-hwm − MiB-idle) / answer, the figure the budget bounds (≤ 2).
func BenchmarkLargeAnswerMemory(b *testing.B) {
	bin := testkit.BuildCorvid(b)
	chunk := sizesFromEnv(b, "CORVID_ANSWER_CHUNK", []int{4096})[0]
	for _, mib := range sizesFromEnv(b, "CORVID_ANSWER_MIB", []int{40}) {
		b.Run(fmt.Sprintf("answer-%dMiB", mib), func(b *testing.B) {
			size := mib << 20
			path := filepath.Join(b.TempDir(), "script.json")
			raw := fmt.Sprintf(`{"responses":[{"chunkSize":%d,"parts":[{"type":"text","text":"x","repeat":%d}]}],"onExhausted":"repeat-last"}`, chunk, size)
			if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
				b.Fatal(err)
			}
			var idle, hwm float64
			for range b.N {
				b.StopTimer()
				home, workspace := b.TempDir(), b.TempDir()
				a := startAgent(b, bin, home, workspace, "acp", "-m", "script:"+path)
				res, _ := a.call("session/new", map[string]any{"cwd": workspace, "mcpServers": []any{}})
				sid := string(res[bytes.Index(res, []byte(`"sessionId":"`))+13:])
				sid = sid[:strings.IndexByte(sid, '"')]
				a.drain(b)
				i := vmHWM(a.cmd.Process.Pid)
				b.StartTimer()
				res, _ = a.call("session/prompt", map[string]any{"sessionId": sid,
					"prompt": []any{map[string]any{"type": "text", "text": "stream"}}})
				b.StopTimer()
				if !bytes.Contains(res, []byte("end_turn")) {
					b.Fatalf("prompt: %s", res)
				}
				if h := vmHWM(a.cmd.Process.Pid); h-i > hwm-idle {
					idle, hwm = i, h
				}
				a.close()
			}
			b.ReportMetric(idle, "MiB-idle")
			b.ReportMetric(hwm, "MiB-hwm")
			b.ReportMetric((hwm-idle)/float64(mib), "answer-x")
		})
	}
}
