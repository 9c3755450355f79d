package providers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/llm/catalog"
	"github.com/corvid-agent/corvid/internal/testkit"
)

const (
	answer   = "The answer streams in several small pieces."
	thoughts = "Let me think about this step by step."
)

var usage = tokens{input: 1234, cached: 300, output: 56}

func TestTextAndThinkingStreamAsChunksAndUsageIsReported(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		r := start(t, p)
		r.fake.enqueue(reply{thinking: thoughts, text: answer, usage: usage})
		sid := r.ready(t)
		if stop, rerr := r.Prompt(r.ctx, sid, "hello"); rerr != nil || stop != "end_turn" {
			t.Fatalf("prompt: stop %q, error %v", stop, rerr)
		}
		ups := r.Updates(sid)
		if got := testkit.TextOf(ups, "agent_message_chunk"); got != answer {
			t.Errorf("agent_message_chunk text %q, want %q", got, answer)
		}
		if n := len(testkit.OfKind(ups, "agent_message_chunk")); n < 2 {
			t.Errorf("%d agent_message_chunk updates: the text was not streamed", n)
		}
		if got := testkit.TextOf(ups, "agent_thought_chunk"); got != thoughts {
			t.Errorf("agent_thought_chunk text %q, want %q", got, thoughts)
		}
		checkUsage(t, r, ups, p.used(usage))
	})
}

// checkUsage asserts the last usage_update says used tokens of the
// catalog's context window.
func checkUsage(t *testing.T, r *run, ups []testkit.Update, used int64) {
	t.Helper()
	entry := catalog.Lookup(r.p.name, strings.SplitN(r.p.model, ":", 2)[1])
	if entry.ContextWindow <= 0 {
		t.Fatalf("catalog has no context window for %s", r.p.model)
	}
	us := testkit.OfKind(ups, "usage_update")
	if len(us) == 0 {
		t.Fatal("no usage_update")
	}
	var u struct {
		Used int64 `json:"used"`
		Size int64 `json:"size"`
	}
	if err := json.Unmarshal(us[len(us)-1].Raw, &u); err != nil {
		t.Fatal(err)
	}
	if u.Used != used || u.Size != entry.ContextWindow {
		t.Errorf("usage_update used %d of %d, want %d of %d (the fake reported input %d + cached %d + output %d)",
			u.Used, u.Size, used, entry.ContextWindow, usage.input, usage.cached, usage.output)
	}
}

func TestToolCallRunsAndItsResultReachesTheNextRequest(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		r := start(t, p)
		const content = "corvid provider check 4711\n"
		r.writeFile(t, "notes.txt", content)
		call := toolCall{id: "call_read_1", name: "read", args: `{"path":"notes.txt"}`}
		r.fake.enqueue(reply{tool: &call, usage: usage})
		r.fake.enqueue(reply{text: "The file says 4711.", usage: usage})
		sid := r.ready(t)
		if stop, rerr := r.Prompt(r.ctx, sid, "read notes.txt"); rerr != nil || stop != "end_turn" {
			t.Fatalf("prompt: stop %q, error %v", stop, rerr)
		}
		ups := r.Updates(sid)
		calls := testkit.OfKind(ups, "tool_call")
		if len(calls) != 1 {
			t.Fatalf("%d tool_call updates, want 1", len(calls))
		}
		var input map[string]any
		if err := json.Unmarshal(calls[0].RawInput, &input); err != nil || input["path"] != "notes.txt" {
			t.Errorf("tool_call rawInput %s, want path notes.txt (arguments reassembled from the streamed pieces)", calls[0].RawInput)
		}
		last := ""
		for _, u := range ups {
			if u.ToolCallID == calls[0].ToolCallID && u.Status != "" {
				last = u.Status
			}
		}
		if last != "completed" {
			t.Errorf("tool call ended %q, want completed", last)
		}
		reqs := r.fake.requests()
		if len(reqs) != 2 {
			t.Fatalf("the fake received %d requests, want 2", len(reqs))
		}
		res, ok := p.toolResult(reqs[1].Body, call)
		if !ok {
			t.Fatalf("second request has no result for %s:\n%s", call.id, reqs[1].Raw)
		}
		if b, _ := json.Marshal(res); !strings.Contains(string(b), "corvid provider check 4711") {
			t.Errorf("tool result %s does not carry the file's content", b)
		}
		if _, ok := p.toolResult(reqs[0].Body, call); ok {
			t.Error("the first request already had a tool result")
		}
		if got := testkit.TextOf(ups, "agent_message_chunk"); got != "The file says 4711." {
			t.Errorf("final text %q", got)
		}
	})
}

func TestMidStreamErrorEndsThePromptWithOneSentenceAndTheProcessStaysUsable(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		r := start(t, p)
		r.fake.enqueue(reply{text: answer, fault: midError})
		r.fake.enqueue(reply{text: "second try works", usage: usage})
		sid := r.ready(t)
		stop, rerr := r.Prompt(r.ctx, sid, "hello")
		if rerr == nil {
			t.Fatalf("prompt ended %q, want an error", stop)
		}
		checkOneSentence(t, rerr, p.title, serverMessage)
		if testkit.TextOf(r.Updates(sid), "agent_message_chunk") == "" {
			t.Error("no text was streamed before the error (the fault should come mid-stream)")
		}
		if n := len(r.fake.requests()); n != 1 {
			t.Errorf("%d requests: a failure after streamed output must not be retried", n)
		}
		seq := r.lastSeq()
		if stop, rerr := r.Prompt(r.ctx, sid, "again"); rerr != nil || stop != "end_turn" {
			t.Fatalf("second prompt: stop %q, error %v", stop, rerr)
		}
		if got := testkit.TextOf(r.updatesSince(sid, seq), "agent_message_chunk"); got != "second try works" {
			t.Errorf("second prompt text %q", got)
		}
	})
}

// checkOneSentence asserts a prompt error is a JSON-RPC error whose
// message is one sentence that names the provider and says what failed.
func checkOneSentence(t *testing.T, rerr *testkit.RPCError, title string, wants ...string) {
	t.Helper()
	msg := rerr.Message
	t.Logf("error %d: %s", rerr.Code, msg)
	if rerr.Code == 0 || msg == "" {
		t.Fatalf("error %+v: want a code and a message", rerr)
	}
	if !strings.HasPrefix(msg, title+" ") {
		t.Errorf("error message %q does not begin with the provider's name %q", msg, title)
	}
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("error message %q does not say %q", msg, w)
		}
	}
	if strings.ContainsAny(msg, "\n\r") || strings.Contains(strings.TrimRight(msg, "."), ". ") || len(msg) > 300 {
		t.Errorf("error message %q is not one sentence", msg)
	}
}

func TestRateLimitIsRetriedAfterRetryAfterAndSucceeds(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		// A tiny base delay: only the server's retry-after can make corvid
		// wait a whole second.
		r := start(t, p, "CORVID_RETRY_BASE_DELAY=10ms")
		r.fake.enqueue(reply{fault: rateLimited})
		r.fake.enqueue(reply{text: answer, usage: usage})
		sid := r.ready(t)
		began := time.Now()
		stop, rerr := r.Prompt(r.ctx, sid, "hello")
		took := time.Since(began)
		if rerr != nil || stop != "end_turn" {
			t.Fatalf("prompt: stop %q, error %v", stop, rerr)
		}
		if n := len(r.fake.requests()); n != 2 {
			t.Errorf("%d requests, want 2 (the 429, then the retry)", n)
		}
		if took < 900*time.Millisecond {
			t.Errorf("the retry came after %v; the server asked for 1s (retry-after)", took)
		}
		if got := testkit.TextOf(r.Updates(sid), "agent_message_chunk"); got != answer {
			t.Errorf("text %q, want %q", got, answer)
		}
	})
}

func TestStallEndsThePromptWithinSecondsNotAHang(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		r := start(t, p, "CORVID_STREAM_IDLE_TIMEOUT=1s")
		r.fake.enqueue(reply{text: answer, fault: midStall})
		r.fake.enqueue(reply{text: "after the stall", usage: usage})
		sid := r.ready(t)
		// Well under the providers' 60 s default, so a timeout that was
		// not passed on fails here rather than waiting it out.
		ctx, cancel := context.WithTimeout(r.ctx, 15*time.Second)
		defer cancel()
		began := time.Now()
		stop, rerr := r.Prompt(ctx, sid, "hello")
		took := time.Since(began)
		if rerr == nil {
			t.Fatalf("prompt ended %q after %v, want a stall error", stop, took)
		}
		if took > 8*time.Second {
			t.Errorf("the stall was noticed after %v, want about 1s", took)
		}
		checkOneSentence(t, rerr, p.title, "stalled", "1s")
		if stop, rerr := r.Prompt(r.ctx, sid, "again"); rerr != nil || stop != "end_turn" {
			t.Fatalf("prompt after the stall: stop %q, error %v", stop, rerr)
		}
	})
}

func TestStallBeforeAnyOutputIsRetried(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		r := start(t, p, "CORVID_STREAM_IDLE_TIMEOUT=1s", "CORVID_RETRY_BASE_DELAY=10ms")
		r.fake.enqueue(reply{text: answer, fault: headersStall})
		r.fake.enqueue(reply{text: answer, usage: usage})
		sid := r.ready(t)
		if stop, rerr := r.Prompt(r.ctx, sid, "hello"); rerr != nil || stop != "end_turn" {
			t.Fatalf("prompt: stop %q, error %v", stop, rerr)
		}
		if n := len(r.fake.requests()); n != 2 {
			t.Errorf("%d requests, want 2 (the stalled one, then the retry)", n)
		}
		if got := testkit.TextOf(r.Updates(sid), "agent_message_chunk"); got != answer {
			t.Errorf("text %q, want %q", got, answer)
		}
	})
}

// pixel is a 1×1 PNG.
var pixel, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

func TestImagePromptReachesTheModelOrIsRefused(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		r := start(t, p)
		r.fake.enqueue(reply{text: "a single pixel", usage: usage})
		init, rerr := r.Initialize(r.ctx, testkit.Minimal())
		if rerr != nil {
			t.Fatalf("initialize: %v", rerr)
		}
		var caps struct {
			PromptCapabilities struct {
				Image bool `json:"image"`
			} `json:"promptCapabilities"`
		}
		_ = json.Unmarshal(init.AgentCapabilities, &caps)
		entry := catalog.Lookup(p.name, strings.SplitN(p.model, ":", 2)[1])
		if caps.PromptCapabilities.Image != entry.Images {
			t.Errorf("promptCapabilities.image %v, catalog says %v", caps.PromptCapabilities.Image, entry.Images)
		}
		sid := r.NewSession(r.ctx, r.workspace)
		data := base64.StdEncoding.EncodeToString(pixel)
		_, rerr = r.Call(r.ctx, "session/prompt", map[string]any{
			"sessionId": sid,
			"prompt": []any{
				map[string]any{"type": "text", "text": "what is this?"},
				map[string]any{"type": "image", "mimeType": "image/png", "data": data},
			},
		})
		if !entry.Images {
			if rerr == nil || rerr.Code != testkit.CodeInvalidParams {
				t.Errorf("image to a model without image input: error %v, want %d", rerr, testkit.CodeInvalidParams)
			}
			if n := len(r.fake.requests()); n != 0 {
				t.Errorf("%d requests reached the model", n)
			}
			return
		}
		if rerr != nil {
			t.Fatalf("prompt with an image: %v", rerr)
		}
		reqs := r.fake.requests()
		if len(reqs) != 1 || !strings.Contains(string(reqs[0].Raw), data) {
			t.Errorf("the image's data did not reach the model")
		}
	})
}

func TestReasoningStateOfAToolTurnGoesBackWithTheToolResult(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		if !p.signatures {
			t.Skipf("%s's wire format carries no reasoning state", p.name)
		}
		r := start(t, p)
		r.writeFile(t, "notes.txt", "x\n")
		const sig = "c2lnbmF0dXJlLTQ3MTE=" // base64 of "signature-4711"
		call := toolCall{id: "call_read_2", name: "read", args: `{"path":"notes.txt"}`}
		r.fake.enqueue(reply{thinking: thoughts, signature: sig, tool: &call, usage: usage})
		r.fake.enqueue(reply{text: "done", usage: usage})
		sid := r.ready(t)
		if stop, rerr := r.Prompt(r.ctx, sid, "read notes.txt"); rerr != nil || stop != "end_turn" {
			t.Fatalf("prompt: stop %q, error %v", stop, rerr)
		}
		reqs := r.fake.requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		if strings.Contains(string(reqs[0].Raw), sig) {
			t.Fatal("the first request already carried the signature")
		}
		if !strings.Contains(string(reqs[1].Raw), sig) {
			t.Errorf("the request after the tool call lost the reasoning state %s:\n%s", sig, reqs[1].Raw)
		}
	})
}

func TestCancelMidStreamEndsThePromptCancelledAndTheNextPromptWorks(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		r := start(t, p)
		r.fake.enqueue(reply{text: answer, delay: 200 * time.Millisecond})
		r.fake.enqueue(reply{text: "after the cancel", usage: usage})
		sid := r.ready(t)
		prompt := r.CallAsync("session/prompt", testkit.TextPrompt(sid, "hello"))
		if _, err := r.WaitUpdate(r.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
			t.Fatalf("no text before the cancel: %v", err)
		}
		began := time.Now()
		r.Cancel(sid)
		raw, rerr := prompt.Wait(r.ctx)
		if took := time.Since(began); took > hangLimit {
			t.Errorf("the prompt answered %v after session/cancel", took)
		}
		var res struct {
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal(raw, &res)
		if rerr != nil || res.StopReason != "cancelled" {
			t.Fatalf("cancelled prompt: result %s, error %v; want stopReason cancelled", raw, rerr)
		}
		seq := r.lastSeq()
		if stop, rerr := r.Prompt(r.ctx, sid, "again"); rerr != nil || stop != "end_turn" {
			t.Fatalf("prompt after the cancel: stop %q, error %v", stop, rerr)
		}
		if got := testkit.TextOf(r.updatesSince(sid, seq), "agent_message_chunk"); got != "after the cancel" {
			t.Errorf("text after the cancel %q", got)
		}
	})
}
