package openai

import (
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// TestDebugLogRecordsEachModelRequestWithoutKeysOrBodies runs a recorded
// two-request tool loop with --log-level debug and then trace. At debug,
// stderr must have one "model request" line per request, naming the model
// and giving sizes, and one "model response" with the recorded token
// counts; never the key, and never the prompt (a body). At trace, the
// request itself appears, still without the key.
func TestDebugLogRecordsEachModelRequestWithoutKeysOrBodies(t *testing.T) {
	const prompt = "How many of each item are in the inventory? marker-7f3a"
	for _, level := range []string{"debug", "trace"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			first := replay.Read(t, "programmatic-tool-calling.1.chunks.txt")
			text := replay.Split(replay.Read(t, "openai-reasoning-encrypted-content.1.chunks.txt"), responseCreated)[3]
			srv := replay.New(t, replay.Chunks(first, false), replay.Chunks(text, false))
			c := replay.Open(t, withModel(openaiProvider, "openai:gpt-5.6-sol"), srv, nil, "--log-level", level)
			if stop, rerr := c.Prompt(c.Ctx, c.SID, prompt); rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: stop %q, error %v", stop, rerr)
			}
			c.Close()
			log := c.Stderr()
			var reqs, resps []string
			for _, line := range strings.Split(log, "\n") {
				switch {
				case strings.Contains(line, `msg="model request"`):
					reqs = append(reqs, line)
				case strings.Contains(line, `msg="model response"`):
					resps = append(resps, line)
				}
			}
			if len(reqs) != len(srv.Requests()) || len(resps) != len(srv.Requests()) {
				t.Fatalf("%d model request and %d model response lines for %d requests:\n%s", len(reqs), len(resps), len(srv.Requests()), log)
			}
			for _, want := range []string{"model=openai:gpt-5.6-sol", "messages=1", "tools=", "content_bytes="} {
				if !strings.Contains(reqs[0], want) {
					t.Errorf("first model request line lacks %q: %s", want, reqs[0])
				}
			}
			// The recorded usage of the first response: input 631, output 87.
			if !strings.Contains(resps[0], "input_tokens=631") || !strings.Contains(resps[0], "output_tokens=87") || !strings.Contains(resps[0], "stop=tool_use") {
				t.Errorf("first model response line does not carry the recorded usage and stop: %s", resps[0])
			}
			if strings.Contains(log, replay.Key) {
				t.Errorf("the %s log contains the API key", level)
			}
			if hasPrompt := strings.Contains(log, "marker-7f3a"); hasPrompt != (level == "trace") {
				t.Errorf("at %s the log shows the prompt: %v, want %v", level, hasPrompt, level == "trace")
			}
		})
	}
}
