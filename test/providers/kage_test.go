package providers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// kage's provider ids (its docs/guide/providers.md), each pointed at the
// fake of its API family through its base-URL variable, with kage's key
// variable. Every key is set at once (keys), so a request that carries
// another provider's key, or goes out without its own, fails
// checkCredentials.
var kageProviders = []provider{
	kageChat("zai", "Z.AI", "zai:glm-4.6", "ZAI_API_KEY", "ZAI_BASE_URL"),
	kageChat("zai-coding-plan", "Z.AI Coding Plan", "zai-coding-plan:glm-4.6", "ZAI_CODING_API_KEY", "ZAI_CODING_BASE_URL"),
	kageChat("moonshotai", "Moonshot", "moonshotai:kimi-k2-0905-preview", "MOONSHOT_API_KEY", "MOONSHOT_BASE_URL"),
	kageChat("kimi-for-coding", "Kimi for Coding", "kimi-for-coding:kimi-for-coding", "KIMI_API_KEY", "KIMI_BASE_URL"),
	kageChat("xiaomi", "Xiaomi", "xiaomi:mimo-v2-flash", "XIAOMI_API_KEY", "XIAOMI_BASE_URL"),
	kageChat("xiaomi-token-plan-ams", "Xiaomi AMS plan", "xiaomi-token-plan-ams:mimo-v2-flash", "XIAOMI_API_KEY", "XIAOMI_AMS_BASE_URL"),
	kageChat("xiaomi-token-plan-cn", "Xiaomi CN plan", "xiaomi-token-plan-cn:mimo-v2-flash", "XIAOMI_API_KEY", "XIAOMI_CN_BASE_URL"),
	kageChat("xiaomi-token-plan-sgp", "Xiaomi SGP plan", "xiaomi-token-plan-sgp:mimo-v2-flash", "XIAOMI_API_KEY", "XIAOMI_SGP_BASE_URL"),
	kageChat("fireworks-ai", "Fireworks AI", "fireworks-ai:accounts/fireworks/models/kimi-k2-instruct-0905", "FIREWORKS_API_KEY", "FIREWORKS_BASE_URL"),
	// corvid's own name for the same preset.
	kageChat("fireworks-ai", "Fireworks AI", "fireworks:accounts/fireworks/models/kimi-k2-instruct-0905", "FIREWORKS_API_KEY", "FIREWORKS_BASE_URL"),
	{
		name: "openai-responses", title: "OpenAI", model: "openai-responses:gpt-5",
		keyVar: "OPENAI_API_KEY", baseVar: "OPENAI_BASE_URL",
		start: startOpenAI,
		used:  func(u tokens) int64 { return u.input + u.cached + u.output },
		auth:  bearer,
	},
}

func kageChat(name, title, model, keyVar, baseVar string) provider {
	return provider{
		name: name, title: title, model: model, keyVar: keyVar, baseVar: baseVar,
		start:           startOpenAI,
		used:            func(u tokens) int64 { return u.input + u.cached + u.output },
		toolResult:      chatToolResult,
		auth:            bearer,
		streamsToolArgs: true,
	}
}

func init() {
	for _, p := range kageProviders {
		if _, ok := keys[p.keyVar]; !ok {
			keys[p.keyVar] = "sk-test-" + strings.ToLower(p.keyVar)
		}
	}
}

// TestKageProviderIDsStreamFromTheirAPIFamily launches `corvid acp -m
// ID:MODEL` for each of kage's provider ids and checks that a prompt
// reaches the fake of the provider's API family on the right endpoint
// (Chat Completions, or Responses for openai-responses), with the
// provider's own key, streams back, and is sized by the catalog.
func TestKageProviderIDsStreamFromTheirAPIFamily(t *testing.T) {
	for _, p := range kageProviders {
		t.Run(strings.SplitN(p.model, ":", 2)[0], func(t *testing.T) {
			t.Parallel()
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
			checkUsage(t, r, ups, p.used(usage))
			reqs := r.fake.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests reached the fake, want 1", len(reqs))
			}
			_, responses := reqs[0].Body["input"]
			_, chat := reqs[0].Body["messages"]
			wantResponses := p.name == "openai-responses"
			if responses != wantResponses || chat == wantResponses {
				t.Errorf("request body keys input=%v messages=%v: want the %s API", responses, chat, map[bool]string{true: "Responses", false: "Chat Completions"}[wantResponses])
			}
			if model := fmt.Sprint(reqs[0].Body["model"]); model != strings.SplitN(p.model, ":", 2)[1] {
				t.Errorf("request model %q, want %q", model, strings.SplitN(p.model, ":", 2)[1])
			}
		})
	}
}
