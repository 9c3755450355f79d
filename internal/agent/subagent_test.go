package agent

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/store"
)

// C31–C33: a sub-agent inherits the parent's explicit tier when its own
// model offers it; without an explicit tier it uses its model's default (not
// the parent's window); a tier its model lacks fails closed to the default.
func TestSubagentTierInheritance(t *testing.T) {
	cases := []struct {
		name   string
		parent int64
		child  []int64
		want   int64
	}{
		{"explicit tier the child supports (C31)", 1000000, []int64{200000, 1000000}, 1000000},
		{"no explicit tier: the child's default (C32)", 0, []int64{200000, 1000000}, 0},
		{"unsupported tier fails closed (C33)", 1000000, []int64{128000, 400000}, 0},
		{"single-window child model (C33)", 1000000, []int64{1000000}, 0},
	}
	for _, c := range cases {
		if got := inheritTier(c.parent, c.child); got != c.want {
			t.Errorf("%s: inheritTier(%d, %v) = %d, want %d", c.name, c.parent, c.child, got, c.want)
		}
	}
}

// A sub-agent's text in the session's log is not the session's answer: a
// crash mid-task must not put it into the parent's model context.
func TestFoldKeepsSubagentTextOutOfTheContext(t *testing.T) {
	row := func(seq int64, kind string, v any) store.Event {
		b, _ := json.Marshal(v)
		return store.Event{Seq: seq, Kind: kind, Payload: b}
	}
	user := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("go")}}
	tagged := Event{Kind: EventMessageChunk, MessageID: "m1", Content: &Block{Type: BlockText, Text: "child says"},
		Tags: Tags{Member: &Member{Name: "a"}}}
	lg := Fold([]store.Event{row(1, recordContext, user), row(2, string(EventMessageChunk), tagged)})
	if len(lg.History) != 1 {
		t.Fatalf("history after a crash mid-task: %d messages, want only the prompt: %+v", len(lg.History), lg.History)
	}
	if len(lg.Entries()) != 1 || lg.Entries()[0].Member == nil || lg.Entries()[0].Member.Name != "a" {
		t.Errorf("the tagged chunk should replay with its tags: %+v", lg.Entries())
	}
}

// Two task calls of one response run as two sub-agents at once (run with
// -race): both answer, both answers reach the parent model, and their
// frames are tagged and stored in the parent's log.
func TestParallelSubagentsShareTheRootSession(t *testing.T) {
	tasks := []llm.Event{
		{Type: llm.EventToolUseStart, Index: 0, ToolUseID: "a", ToolName: "task"},
		{Type: llm.EventToolUseEnd, Index: 0, ToolUseID: "a", ToolName: "task", Input: json.RawMessage(`{"description":"one","prompt":"p","name":"one"}`)},
		{Type: llm.EventToolUseStart, Index: 1, ToolUseID: "b", ToolName: "task"},
		{Type: llm.EventToolUseEnd, Index: 1, ToolUseID: "b", ToolName: "task", Input: json.RawMessage(`{"description":"two","prompt":"p","name":"two"}`)},
		{Type: llm.EventStop, StopReason: llm.StopToolUse},
	}
	child := append([]llm.Event{{Type: llm.EventUsage, Usage: llm.Usage{InputTokens: 3, OutputTokens: 2}}}, answer("child answer")...)
	h := newHarness(t, permission.ModeDefault, reply{events: tasks}, reply{events: child}, reply{events: child}, reply{events: answer("all done")})
	if stop := h.prompt(t, "go"); stop != StopEndTurn {
		t.Fatalf("stop %q", stop)
	}
	last := h.model.request(t, 3)
	results := 0
	for _, m := range last.Messages {
		for _, p := range m.Parts {
			if p.Type == llm.PartToolResult && p.Text == "child answer" && !p.IsError {
				results++
			}
		}
	}
	if results != 2 {
		t.Errorf("the parent's last request holds %d child answers, want 2", results)
	}
	tagged := map[string]int{}
	for _, ev := range h.front.shown() {
		if ev.Member != nil && ev.Kind == EventMessageChunk {
			tagged[ev.Member.Name]++
		}
	}
	if tagged["one"] != 1 || tagged["two"] != 1 {
		t.Errorf("tagged chunks %v, want one each from one and two", tagged)
	}
	if in, out := h.s.sub.team.totals(); in != 6 || out != 4 {
		t.Errorf("rolled-up tokens %d in, %d out; want 6, 4", in, out)
	}
}

// A sub-agent gets the tools asked for (the skill loader always), a task
// tool only while below the depth limit, and never the team tool; the
// system prompt tells it what it is.
func TestSubagentToolsAndPrompt(t *testing.T) {
	h := newHarness(t, permission.ModeDefault,
		reply{events: callTool("a", "task", `{"description":"d","prompt":"p","name":"sub","tools":["run"]}`)},
		reply{events: answer("child")},
		reply{events: callTool("b", "task", `{"description":"d","prompt":"p","name":"full"}`)},
		reply{events: answer("child 2")},
		reply{events: answer("done")})
	h.prompt(t, "go")
	names := func(r llm.Request) []string {
		var out []string
		for _, sp := range r.Tools {
			out = append(out, sp.Name)
		}
		return out
	}
	root := names(h.model.request(t, 0))
	if !slices.Contains(root, "task") || !slices.Contains(root, "team") {
		t.Errorf("root tools %v: want task and team", root)
	}
	sub := h.model.request(t, 1)
	if got := names(sub); !slices.Equal(got, []string{"run", "skill"}) {
		t.Errorf("subset child tools %v, want [run skill]", got)
	}
	if !strings.Contains(sub.System, `You are sub-agent "sub"`) || !strings.HasPrefix(sub.System, "test system") {
		t.Errorf("child system prompt %q", sub.System)
	}
	// The second task (in the root's next response) runs a child with all
	// of the root's tools but team; depth 1 < 2 keeps task.
	if got := names(h.model.request(t, 3)); !slices.Equal(got, []string{"run", "skill", "task"}) {
		t.Errorf("full child tools %v, want [run skill task]", got)
	}
}

// The task and team tools' schemas name exactly the fields their inputs
// decode, and their descriptions are there.
func TestSubagentToolSchemasMatchTheirInputs(t *testing.T) {
	fields := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			out = append(out, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
		}
		slices.Sort(out)
		return out
	}
	props := func(raw json.RawMessage) []string {
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		var out []string
		for k := range s.Properties {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	if got, want := props(taskTool{}.InputSchema()), fields(taskInput{}); !slices.Equal(got, want) {
		t.Errorf("task schema properties %v, input fields %v", got, want)
	}
	if got, want := props(teamTool{}.InputSchema()), fields(teamInput{}); !slices.Equal(got, want) {
		t.Errorf("team schema properties %v, input fields %v", got, want)
	}
	if !strings.Contains(taskTool{}.Description(), "parallel") || !strings.Contains(teamTool{}.Description(), "create") {
		t.Error("tool descriptions are missing")
	}
}

// A priced sub-agent's cost (cumulative in its own readings) is added to
// the root's once: the root's usage_update shows the parent's meter with
// the total cost, and the member's tokens add up.
func TestSubagentCostRollsUpIntoTheRoot(t *testing.T) {
	h := newHarness(t, permission.ModeDefault)
	root := h.s
	root.conv.addCost(0.5) // the parent's own spend so far
	root.conv.setUsed(1234)
	m, _, err := root.sub.team.start("priced", "d", "t1", "sub_x")
	if err != nil {
		t.Fatal(err)
	}
	f := &memberFront{root: root, m: m, tags: &Member{Name: "priced"}, prefix: "sub_x/"}
	for _, c := range []float64{0.01, 0.03} {
		cost := c
		f.Emit(Event{Kind: EventUsage, Usage: &Usage{Used: 900, Size: 100, CostUSD: &cost, Tokens: &llm.Usage{InputTokens: 10, CacheReadTokens: 5, OutputTokens: 2}}})
	}
	var last *Usage
	for _, ev := range h.front.shown() {
		if ev.Kind == EventUsage {
			if ev.Member != nil {
				t.Errorf("a member's usage reading was shown: %+v", ev)
			}
			last = ev.Usage
		}
	}
	if last == nil || last.CostUSD == nil || *last.CostUSD < 0.5299 || *last.CostUSD > 0.5301 || last.Used != 1234 || last.Size != 100_000 {
		t.Fatalf("root usage after the child's readings: %+v (cost %v), want used 1234 of 100000 and cost 0.53", last, last.CostUSD)
	}
	if st := root.conv.stats(); st.Tokens.InputTokens != 20 || st.Tokens.CacheReadTokens != 10 || st.Tokens.OutputTokens != 4 {
		t.Errorf("root token totals %+v, want the child's 20 in, 10 cache reads, 4 out", st.Tokens)
	}
	if m.TokenUsage != (tokenUsage{InputTokens: 30, OutputTokens: 4, LastContextWindow: 900}) {
		t.Errorf("member tokens %+v", m.TokenUsage)
	}
}

// A sub-agent's streamed chunks are merged into rows the way the root's
// are: its untagged events share one meta map.
func TestSubagentChunksMergeInTheLog(t *testing.T) {
	chunks := make([]string, 50)
	for i := range chunks {
		chunks[i] = "x"
	}
	h := newHarness(t, permission.ModeDefault,
		reply{events: callTool("a", "task", `{"description":"d","prompt":"p","name":"m"}`)},
		reply{events: answer(chunks...)},
		reply{events: answer("done")})
	h.prompt(t, "go")
	st, err := h.agent.openStore()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.Events(context.Background(), h.s.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Kind == string(EventMessageChunk) && strings.Contains(string(r.Payload), `"member":`) {
			n++
		}
	}
	if n == 0 || n >= len(chunks) {
		t.Errorf("%d stored rows for the sub-agent's %d chunks: want them merged", n, len(chunks))
	}
}
