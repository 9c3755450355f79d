package chat

import (
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// echoCase is one recorded tool loop whose accepted follow-up carries the
// assistant message's reasoning_content (charmbracelet/fantasy cassettes,
// see ../SOURCES-openai.md), and the preset's documented rule for the next
// turn.
type echoCase struct {
	name     string
	cassette string
	p        replay.Provider
	// nextTurn says what the next prompt's request must carry: the tool
	// call message's reasoning (and the answer's) again, or none of it.
	keepsAcrossTurns bool
}

var echoCases = []echoCase{{
	// Z.AI's Coding Plan endpoint: interleaved thinking within the loop,
	// and "preserved thinking" (on by default there) across turns.
	name:             "zai-coding-plan glm-4.7-flash",
	cassette:         "fantasy-glm-4.7-flash-zai-coding-plan-thinking-streaming.yaml",
	p:                replay.Provider{Model: "zai-coding-plan:glm-4.7-flash", KeyVar: "ZAI_CODING_API_KEY", BaseVar: "ZAI_CODING_BASE_URL", Suffix: "/api/coding/paas/v4"},
	keepsAcrossTurns: true,
}, {
	// llama.cpp serving gpt-oss-20b: the reasoning of the tool call goes
	// back within the loop; gpt-oss's format drops it after the answer.
	name:     "llamacpp gpt-oss-20b",
	cassette: "fantasy-gpt-oss-20b-llama-cpp-thinking-streaming.yaml",
	p:        preset("llamacpp", "openai/gpt-oss-20b"),
}}

// TestReasoningContentGoesBackAsTheAcceptedFollowUpDid replays a real
// stream that reasons and calls a tool (z.ai's Coding Plan endpoint with
// glm-4.7-flash; llama.cpp serving gpt-oss-20b), then the follow-up's
// answer. Each cassette's second request is the follow-up the real server
// accepted: its assistant message carries the tool call and, as
// reasoning_content, the reasoning streamed before it. corvid's follow-up
// must carry the same assistant message: content (where the accepted one
// has it), reasoning_content equal to the accepted one, and the call. Then
// a second prompt, after session/load, checks the rule across turns: the
// Coding Plan keeps every earlier assistant message's reasoning (preserved
// thinking), gpt-oss on llama.cpp gets none once the loop ended with an
// answer.
func TestReasoningContentGoesBackAsTheAcceptedFollowUpDid(t *testing.T) {
	for _, tc := range echoCases {
		t.Run(tc.name, func(t *testing.T) {
			cas := replay.GoVCR(t, replay.Read(t, tc.cassette))
			if len(cas) != 2 {
				t.Fatalf("cassette has %d interactions, want 2", len(cas))
			}
			rec := readRecording(t, sseChunks(cas[0].Response.Body))
			answer := readRecording(t, sseChunks(cas[1].Response.Body))
			var acc replay.Request
			acc.Body = cas[1].RequestBody
			accAsst := replay.Where(acc.Items(t, "messages"), "role", "assistant")
			if len(accAsst) != 1 || accAsst[0]["reasoning_content"] != rec.reasoning || rec.reasoning == "" || len(rec.calls) != 1 {
				t.Fatalf("the cassette is not one reasoned tool call followed by an accepted follow-up carrying that reasoning: %s", acc.Body)
			}

			more := replay.ChatChunks(replay.Read(t, "mistral-text.chunks.txt"))
			srv := replay.New(t, append(replay.Responses(cas), more)...)
			c := replay.Open(t, tc.p, srv, nil)
			c.MustPrompt(t, c.SID, "What's the weather in Florence, Italy?", "end_turn")
			ups := c.Updates(c.SID)
			if got := testkit.TextOf(ups, "agent_thought_chunk"); got != rec.reasoning+answer.reasoning {
				t.Errorf("thought chunks %q, want the recorded reasoning %q", got, rec.reasoning+answer.reasoning)
			}
			if got := testkit.TextOf(ups, "agent_message_chunk"); got != rec.text+answer.text {
				t.Errorf("message %q, want the recorded %q", got, rec.text+answer.text)
			}

			reqs := srv.MustRequests(t, 2)
			a := checkToolFollowUp(t, reqs[1], rec)
			for _, f := range []string{"content", "reasoning_content"} {
				if a[f] != accAsst[0][f] {
					t.Errorf("follow-up assistant %s = %s, the accepted follow-up's %s", f, js(a[f]), js(accAsst[0][f]))
				}
			}
			validateMessages(t, reqs[1])

			// The next turn comes after the editor reloaded the session: the
			// reasoning is part of what was stored.
			c.MustCall(c.Ctx, "session/load", map[string]any{"sessionId": c.SID, "cwd": c.Workspace, "mcpServers": []any{}}, nil)
			c.MustPrompt(t, c.SID, "And tomorrow?", "end_turn")
			third := srv.MustRequests(t, 3)[2]
			as := replay.Where(third.Items(t, "messages"), "role", "assistant")
			if len(as) != 2 {
				t.Fatalf("next turn's request has %d assistant messages, want 2 (the call, the answer): %s", len(as), third.Body)
			}
			want := []any{nil, nil}
			if tc.keepsAcrossTurns {
				want = []any{rec.reasoning, answer.reasoning}
			}
			for i, m := range as {
				if m["reasoning_content"] != want[i] {
					t.Errorf("next turn, assistant message %d: reasoning_content %s, want %s", i+1, js(m["reasoning_content"]), js(want[i]))
				}
			}
		})
	}
}
