package chat

import (
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// TestOpenRouterRecordedErrorIn200IsReportedAndTheSessionGoesOn replays a
// real OpenRouter answer (pydantic-ai's cassette, see ../SOURCES-openai.md):
// status 200, a JSON body whose "error" says the upstream provider (Google)
// rate-limited the request: code 429, message "Provider returned error",
// metadata {provider_name, raw}. corvid must not take it for an empty
// reply: the prompt fails with one line naming OpenRouter, the status once
// and the upstream cause from metadata; and the session stays usable: the
// next prompt gets the recorded text answer.
func TestOpenRouterRecordedErrorIn200IsReportedAndTheSessionGoesOn(t *testing.T) {
	cas := replay.Cassette(t, replay.Read(t, "test_openrouter_errors_raised.yaml"))
	if len(cas) != 1 || cas[0].Response.Status != 200 {
		t.Fatalf("cassette: want one interaction answered 200, got %+v", cas)
	}
	text := replay.Read(t, "mistral-text.chunks.txt")
	srv := replay.New(t, cas[0].Response, replay.ChatChunks(text))
	c := replay.Open(t, preset("openrouter", "google/gemini-2.0-flash-exp:free"), srv, []string{"CORVID_RETRY_MAX_ATTEMPTS=1"})

	_, rerr := c.Prompt(c.Ctx, c.SID, "Tell me a joke.")
	if rerr == nil {
		t.Fatalf("prompt succeeded against a recorded error body\nupdates: %+v", c.Updates(c.SID))
	}
	msg := rerr.Message
	t.Logf("error %d: %s", rerr.Code, msg)
	if !strings.HasPrefix(msg, "OpenRouter ") {
		t.Errorf("error %q does not name OpenRouter first", msg)
	}
	// metadata.raw whole: its own "; " is part of the cause, not the start
	// of corvid's hint.
	for _, want := range []string{"429", "Provider returned error", "Google", "is temporarily rate-limited upstream; please retry shortly"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q drops %q (error.code, error.message, error.metadata)", msg, want)
		}
	}
	if n := strings.Count(msg, "429"); n > 1 {
		t.Errorf("error %q gives the status %d times", msg, n)
	}
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("error %q spans lines", msg)
	}
	if strings.Count(msg, "(") != strings.Count(msg, ")") {
		t.Errorf("error %q has unbalanced parentheses: the cause was cut inside them", msg)
	}

	c.MustPrompt(t, c.SID, "Another one", "end_turn")
	if got, want := testkit.TextOf(c.Updates(c.SID), "agent_message_chunk"), readRecording(t, text).text; !strings.HasSuffix(got, want) {
		t.Errorf("after the error the session answered %q, want the recorded %q", got, want)
	}
}
