package acpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// serverIn is a connection whose client declared dialect in initialize.
func serverIn(compat string, declared any) *Server {
	s := &Server{opts: Options{Compat: compat}}
	s.chooseDialect(&acp.InitializeRequest{Meta: acp.Meta{metaDialect: declared}})
	return s
}

// Each connection spells the core's typed tags for its own client: the
// same events, in CodeBuddy's vocabulary or in plain ACP with corvid's own
// keys only.
func TestEachDialectSpellsTheSameTypedEvents(t *testing.T) {
	member := &agent.Member{ID: "sub_1", Name: "alice", ParentToolCallID: "t1", Depth: 1, Background: true}
	events := []agent.Event{
		{Kind: agent.EventMessageChunk, MessageID: "m", Content: &agent.Block{Type: agent.BlockText, Text: "hi"}, Tags: agent.Tags{Member: member}},
		{Kind: agent.EventUserChunk, MessageID: "u", Content: &agent.Block{Type: agent.BlockText, Text: "go"}, Tags: agent.Tags{TurnID: "0198a"}},
		{Kind: agent.EventMessageChunk, MessageID: "f", Content: &agent.Block{Type: agent.BlockText, Text: "{}"}, Tags: agent.Tags{FinalOutput: &agent.FinalOutputTag{Format: "json"}}},
		{Kind: agent.EventUsage, Usage: &agent.Usage{Used: 1, Size: 2}, Tags: agent.Tags{SubagentUsage: &agent.TokenTotals{InputTokens: 3, OutputTokens: 4}}},
		{Kind: agent.EventTeam, Tags: agent.Tags{Team: agent.TeamUpdate{"type": "team_created", "teamName": "t"}}},
		{Kind: agent.EventDrainStarted, Tags: agent.Tags{Drain: &agent.Drain{RequestID: "r", Reason: agent.DrainReason}}},
		{Kind: agent.EventDrainEnded, Tags: agent.Tags{Drain: &agent.Drain{RequestID: "r", StopReason: "end_turn"}}},
	}
	spell := func(s *Server) string {
		var lines []string
		for _, ev := range events {
			for _, u := range s.updatesFor(ev) {
				b, _ := json.Marshal(u)
				lines = append(lines, string(b))
			}
		}
		return strings.Join(lines, "\n")
	}
	codebuddy := `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m","_meta":{"codebuddy.ai/memberEvent":"alice","corvid.dev/subagent":{"background":true,"depth":1,"id":"sub_1","name":"alice","parentToolCallId":"t1"}}}
{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"go"},"messageId":"u","_meta":{"codebuddy.ai/conversationRequestId":"0198a"}}
{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\n\n--- final output (json) ---\n{}"},"messageId":"f","_meta":{"corvid.dev/finalOutput":{"format":"json"}}}
{"sessionUpdate":"usage_update","used":1,"size":2,"_meta":{"corvid.dev/subagentUsage":{"inputTokens":3,"outputTokens":4}}}
{"sessionUpdate":"session_info_update","_meta":{"codebuddy.ai/teamUpdate":{"teamName":"t","type":"team_created"}}}
{"sessionUpdate":"session_info_update","_meta":{"codebuddy.ai/requestId":"r","codebuddy.ai/unsolicitedTurn":{"reason":"background_drain","requestId":"r"}}}
{"sessionUpdate":"session_info_update","_meta":{"codebuddy.ai/requestId":"r","codebuddy.ai/sessionEnd":{"requestId":"r","stopReason":"end_turn"}}}`
	plain := `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m","_meta":{"corvid.dev/subagent":{"background":true,"depth":1,"id":"sub_1","name":"alice","parentToolCallId":"t1"}}}
{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"go"},"messageId":"u"}
{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\n\n--- final output (json) ---\n{}"},"messageId":"f","_meta":{"corvid.dev/finalOutput":{"format":"json"}}}
{"sessionUpdate":"usage_update","used":1,"size":2,"_meta":{"corvid.dev/subagentUsage":{"inputTokens":3,"outputTokens":4}}}`
	for _, c := range []struct {
		name   string
		s      *Server
		want   string
		frames bool
	}{
		{"default", serverIn("", nil), codebuddy, false},
		{"--compat codebuddy", serverIn(CompatCodeBuddy, nil), codebuddy, true},
		{"declared codebuddy", serverIn("", DialectCodeBuddy), codebuddy, true},
		{"declared acp", serverIn("", DialectACP), plain, false},
		{"declared acp under --compat codebuddy", serverIn(CompatCodeBuddy, DialectACP), plain, false},
	} {
		if got := spell(c.s); got != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, c.want)
		}
		if c.s.codebuddy() != c.frames {
			t.Errorf("%s: CodeBuddy's frames %v, want %v", c.name, c.s.codebuddy(), c.frames)
		}
	}
}

func TestDeclaringGasCityGivesGasCitysShapes(t *testing.T) {
	if s := serverIn("", DialectGasCity); !s.messagesHost.Load() || s.codebuddy() {
		t.Fatalf("a connection that declared gascity: messages host %v, CodeBuddy frames %v", s.messagesHost.Load(), s.codebuddy())
	}
	if s := serverIn("", nil); s.messagesHost.Load() {
		t.Fatal("a connection that declared nothing is a messages host")
	}
}
