package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/tool"
)

// Sub-agents (ARCHITECTURE.md §4). The task tool starts a child session made
// of the same parts as its parent: a conversation of its own (its model
// context), a copy of the settings, a toolbox with a subset of the tools,
// the parent's gate, and a front end (memberFront) that tags the child's
// events and records them in the root session's event log, so the editor
// sees them as updates of the session it opened and session/load replays
// them. The child's turn runs on a context derived from its parent's turn:
// a cancel reaches the whole tree.

// DefaultMaxDepth is how deep a sub-agent tree may grow when neither the
// profile nor --max-depth says.
const DefaultMaxDepth = 2

// SubProfile is an agent profile as a sub-agent uses it.
type SubProfile struct {
	Name        string
	Description string
	Model       string // provider:model; "" = the parent's
	Prompt      string // the profile's system prompt and instructions
}

// subState is a session's place in its sub-agent tree.
type subState struct {
	depth    int      // 0: a session the editor opened
	maxDepth int      // the deepest a descendant may be
	root     *Session // the session the editor sees (itself at depth 0)
	// prefix goes before this session's tool-call ids on the wire, so they
	// stay unique in the root session ("" at the root).
	prefix string
	team   *team // the root's roster, shared by the tree
}

// maxDepth is the sub-agent depth of a session with profile p: --max-depth,
// else the profile's (its --max-depth 0 included), else DefaultMaxDepth.
func (a *Agent) maxDepth(p *ProfileInfo) int {
	switch {
	case a.cfg.MaxDepth != nil:
		return max(*a.cfg.MaxDepth, 0)
	case p != nil && p.NoSubAgents:
		return 0
	case p != nil && p.MaxDepth > 0:
		return p.MaxDepth
	}
	return DefaultMaxDepth
}

// initTree makes s the root of a sub-agent tree and offers it the task and
// team tools (before the toolbox is first built).
func (s *Session) initTree(p *ProfileInfo) {
	s.sub = subState{maxDepth: s.agent.maxDepth(p), root: s, team: &team{}}
	s.workers = newWorkers()
	if s.sub.maxDepth > 0 {
		s.toolbox.own = append(s.toolbox.own, taskTool{s: s}, teamTool{s: s})
	}
}

// taskInput is the task tool's input.
type taskInput struct {
	Description string   `json:"description"`
	Prompt      string   `json:"prompt"`
	Name        string   `json:"name,omitempty"`
	Profile     string   `json:"profile,omitempty"`
	Model       string   `json:"model,omitempty"`
	Tools       []string `json:"tools,omitempty"`
	Background  bool     `json:"background,omitempty"` // a detached worker (worker.go)
}

//go:embed task.md
var taskDescription string

// taskTool starts a sub-agent and returns its final answer.
type taskTool struct{ s *Session }

func (taskTool) Name() string { return "task" }

func (taskTool) Description() string { return taskDescription }

func (taskTool) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"description":{"type":"string","description":"A short (3-8 word) description of the task"},` +
		`"prompt":{"type":"string","description":"The complete task for the sub-agent"},` +
		`"name":{"type":"string","description":"The sub-agent's name (a team member's name runs that member)"},` +
		`"profile":{"type":"string","description":"An agent profile to run the sub-agent with"},` +
		`"model":{"type":"string","description":"provider:model for the sub-agent (default: yours)"},` +
		`"tools":{"type":"array","items":{"type":"string"},"description":"The tools the sub-agent may use (default: all of yours)"},` +
		`"background":{"type":"boolean","description":"Multitask sessions only: start a detached worker that keeps running after your turn; the call returns at once and its answer comes back later"}},` +
		`"required":["description","prompt"]}`)
}

func (taskTool) Describe(_ *tool.Env, input json.RawMessage) tool.Preview {
	var in taskInput
	_ = json.Unmarshal(input, &in)
	title := "Sub-agent"
	if in.Background {
		title = "Worker"
	}
	if in.Name != "" {
		title += " " + in.Name
	}
	if in.Description != "" {
		title += ": " + shorten(in.Description, 80)
	}
	return tool.Preview{Kind: tool.KindOther, Title: title, Access: tool.AccessNone}
}

func (t taskTool) Run(ctx context.Context, _ *tool.Env, call tool.Call) (tool.Result, error) {
	return t.s.runTask(ctx, call)
}

// allTasks reports whether calls are several task calls (and nothing else).
func allTasks(calls []llm.Part) bool {
	if len(calls) < 2 {
		return false
	}
	for _, c := range calls {
		if c.ToolName != "task" {
			return false
		}
	}
	return true
}

// runTasks runs task calls in parallel: each sub-agent has its own context,
// and what they share (the root's log and front end, the gate's memory, the
// team) is safe for concurrent use. The results keep the calls' order.
func (t *Turn) runTasks(calls []llm.Part) []llm.Part {
	results := make([]llm.Part, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if t.ctx.Err() != nil {
				results[i] = llm.Part{Type: llm.PartToolResult, ToolUseID: c.ToolUseID, Text: "cancelled by the user before it ran", IsError: true}
				return
			}
			results[i] = t.runCall(c) // in codeMode "all" a direct task call is refused
		}()
	}
	wg.Wait()
	return results
}

// enrol makes a task's member in root's team and builds the child it
// runs. The team's first member creates it: team_created goes out before
// any status, whichever parallel task gets here first.
func (s *Session) enrol(root *Session, in taskInput, parentCall, id string) (*member, childSpec, error) {
	tm := root.sub.team
	tm.pushMu.Lock()
	m, created, err := tm.start(in.Name, in.Description, parentCall, id)
	if err == nil {
		if created != "" {
			root.pushTeam(teamCreated(created))
		}
		root.pushTeam(tm.status())
	}
	tm.pushMu.Unlock()
	if err != nil {
		return nil, childSpec{}, err
	}
	spec, err := s.childSpec(in, m)
	if err != nil {
		tm.finish(m, statusFailed)
		root.pushTeamStatus()
		return nil, childSpec{}, err
	}
	return m, spec, nil
}

// childSpec is what a sub-agent is built from.
type childSpec struct {
	name        string
	description string
	model       llm.Model
	prompt      string // the profile's text for the system prompt
	tools       []string
	progress    func([]tool.Content)
	background  bool // a detached worker (worker.go)
}

// runTask runs one task call: a child session's single turn.
func (s *Session) runTask(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in taskInput
	if err := json.Unmarshal(call.Input, &in); err != nil || strings.TrimSpace(in.Prompt) == "" || strings.TrimSpace(in.Description) == "" {
		return tool.ErrorResult(`task needs {"description": "...", "prompt": "..."}`), nil
	}
	if in.Background {
		return s.startWorker(in, call)
	}
	root := s.sub.root
	tm := root.sub.team
	parentCall := s.sub.prefix + call.ID
	id := s.newMemberID()
	m, spec, err := s.enrol(root, in, parentCall, id)
	if err != nil {
		return tool.ErrorResult(err.Error()), nil
	}
	spec.progress = call.Progress
	child := s.newChild(id, spec, m, parentCall)
	tm.track(m, child) // its session can be loaded (members.go)
	defer tm.untrack(id)

	t := child.startChildTurn(ctx, []Block{{Type: BlockText, Text: in.Prompt}})
	stop, runErr := t.Run()
	answer := child.finalAnswer()
	status := statusCompleted
	switch {
	case runErr != nil:
		status = statusFailed
	case stop == StopCancelled || ctx.Err() != nil:
		status = statusCancelled
	}
	tm.finish(m, status)
	root.pushTeamStatus()
	switch status {
	case statusFailed:
		return tool.ErrorResult(fmt.Sprintf("sub-agent %s failed: %v", m.Name, runErr)), nil
	case statusCancelled:
		return tool.ErrorResult(fmt.Sprintf("sub-agent %s was cancelled", m.Name)), nil
	}
	if answer == "" {
		answer = fmt.Sprintf("(sub-agent %s ended (%s) without an answer)", m.Name, stop)
	}
	return tool.Result{Output: answer, Content: []tool.Content{textContent(answer)}}, nil
}

// childSpec resolves a task's profile, model and tools.
func (s *Session) childSpec(in taskInput, m *member) (childSpec, error) {
	a := s.agent
	spec := childSpec{name: m.Name, description: in.Description, tools: in.Tools, model: s.settings.view().model}
	profileName := in.Profile
	if profileName == "" {
		profileName = m.Profile
	}
	modelID := in.Model
	if profileName != "" {
		if a.cfg.AgentProfile == nil {
			return spec, fmt.Errorf("agent profiles are not available here, so profile %q cannot be used", profileName)
		}
		p, err := a.cfg.AgentProfile(profileName)
		if err != nil {
			return spec, fmt.Errorf("profile %q: %v", profileName, err)
		}
		spec.prompt = p.Prompt
		if modelID == "" {
			modelID = p.Model
		}
	}
	if modelID != "" && modelID != spec.model.Info().ID {
		cur := spec.model.Info()
		curProvider, _ := llm.ParseModelID(cur.ID)
		provider, _ := llm.ParseModelID(modelID)
		known := slices.ContainsFunc(a.modelChoices(cur), func(c ModelChoice) bool { return c.ID == modelID })
		if a.cfg.OpenModel == nil || (!known && provider != curProvider) {
			return spec, fmt.Errorf("model %q is not available to sub-agents (use one of the session's models or another model of provider %q)", modelID, curProvider)
		}
		mdl, err := a.cfg.OpenModel(modelID)
		if err != nil {
			return spec, fmt.Errorf("model %q: %v", modelID, err)
		}
		spec.model = mdl
	}
	if len(in.Tools) > 0 {
		have := s.toolbox.view().tools
		for _, name := range in.Tools {
			if _, ok := have.Get(name); !ok {
				return spec, fmt.Errorf("tool %q is not one of this session's tools", name)
			}
		}
	}
	return spec, nil
}

// newChild builds a sub-agent session under s.
func (s *Session) newChild(id string, spec childSpec, m *member, parentCall string) *Session {
	a := s.agent
	depth := s.sub.depth + 1
	root := s.sub.root
	tags := &Member{ID: id, Name: m.Name, ParentToolCallID: parentCall, Depth: depth, Background: spec.background}
	front := &memberFront{root: root, m: m, tags: tags, prefix: id + "/", progress: spec.progress}
	child := &Session{ID: id, agent: a, front: front, env: s.env, gate: s.gate}
	child.env.Images = spec.model.Info().Images
	if ask := root.env.Ask; ask != nil {
		// ask_user and exit_plan questions: the root's, for the child's
		// (prefixed) tool call, titled with its name.
		child.env.Ask = memberAsker{Asker: ask, prefix: id + "/", name: m.Name}
	}
	child.conv = newConversation(id, nil, a.cfg.Logger, front)

	pv := s.settings.view()
	s.settings.mu.Lock()
	thought, profile := s.settings.thought, s.settings.profile
	s.settings.mu.Unlock()
	cs := &settings{agent: a, id: id, model: spec.model, mode: pv.mode, thought: thought, profile: profile}
	cs.mu.Lock()
	cs.windowTier = inheritTier(pv.tier, cs.tiers())
	cs.mu.Unlock()
	child.settings = cs
	child.sub = subState{depth: depth, maxDepth: s.sub.maxDepth, root: root, prefix: id + "/", team: root.sub.team}

	// The toolbox: the parent's tools (or the subset asked for), its MCP
	// tools among them as they are now (the child never owns or closes
	// the servers), and the task tool while the tree may grow deeper.
	pb := s.toolbox.view()
	// The parent's own tools (task, team, submit_output, …) act on the
	// parent session: the child gets its own task tool below, none of the
	// others.
	own := map[string]bool{}
	for _, t := range s.toolbox.own {
		own[t.Name()] = true
	}
	var tools []tool.Tool
	for _, sp := range pb.tools.Specs() {
		if own[sp.Name] {
			continue
		}
		if t, ok := pb.tools.Get(sp.Name); ok && (len(spec.tools) == 0 || slices.Contains(spec.tools, sp.Name)) {
			tools = append(tools, t)
		}
	}
	ccfg := a.cfg
	ccfg.Tools = func() []tool.Tool { return tools }
	box := &toolbox{cfg: &ccfg, id: id, cwd: s.env.Cwd, system: pb.system + "\n\n" + subagentNote(m.Name, spec), custom: pb.custom, skills: pb.skills}
	if depth < s.sub.maxDepth && (len(spec.tools) == 0 || slices.Contains(spec.tools, "task")) {
		box.own = append(box.own, taskTool{s: child})
	}
	box.rebuild()
	child.toolbox = box
	return child
}

// subagentNote tells a sub-agent what it is.
func subagentNote(name string, spec childSpec) string {
	note := fmt.Sprintf("# You are sub-agent %q\n\nAnother agent gave you one task (%s). Work on it with your tools; nobody reads your messages until you finish. "+
		"Your final message is returned to that agent as your whole answer: make it complete and self-contained.", name, spec.description)
	if spec.prompt != "" {
		note += "\n\n" + spec.prompt
	}
	return note
}

// inheritTier is a sub-agent's context tier (C31–C33): the parent's
// explicit tier when the child's model offers it, else (no explicit tier,
// or one the child's model does not support: fail closed) the child
// model's default.
func inheritTier(parent int64, childTiers []int64) int64 {
	if parent > 0 && len(childTiers) >= 2 && slices.Contains(childTiers, parent) {
		return parent
	}
	return 0
}

// startChildTurn registers the child's one turn, cancelled with ctx (its
// parent's turn).
func (s *Session) startChildTurn(ctx context.Context, blocks []Block) *Turn {
	c, cancel := context.WithCancel(ctx)
	t := &Turn{s: s, ctx: c, cancel: cancel, done: make(chan struct{}), blocks: blocks}
	s.runner.mu.Lock()
	s.runner.turn = t
	s.runner.mu.Unlock()
	return t
}

// finalAnswer is the text of the session's last answer.
func (s *Session) finalAnswer() string {
	h := s.conv.messages()
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role != llm.RoleAssistant {
			continue
		}
		var b strings.Builder
		for _, p := range h[i].Parts {
			if p.Type == llm.PartText {
				b.WriteString(p.Text)
			}
		}
		if b.Len() > 0 {
			return b.String()
		}
	}
	return ""
}

// memberFront is a sub-agent's front end: it tags the child's events,
// makes their tool-call ids unique in the root session, records them in the
// root's log (which shows them), rolls the child's usage up into the root's
// and asks the root's front end the child's permission questions.
type memberFront struct {
	root     *Session
	m        *member
	tags     *Member
	prefix   string
	progress func([]tool.Content) // the parent's task call

	mu    sync.Mutex
	steps []string // what the child did, for the parent's task call
}

func (f *memberFront) Emit(ev Event) {
	switch ev.Kind {
	case EventUsage:
		if ev.Usage != nil {
			f.usage(*ev.Usage)
		}
		return
	case EventInfo, EventCommands, EventMode, EventConfig:
		return // the child's own title and pickers are nobody's business
	}
	if ev.ToolCall != nil {
		tc := *ev.ToolCall
		tc.ID = f.prefix + tc.ID
		ev.ToolCall = &tc
		if ev.Kind == EventToolCall {
			f.root.sub.team.countToolCall(f.m)
			f.step(tc.Title)
		}
	}
	// Every event shares the one Member (never changed), so the log
	// merges a sub-agent's streamed chunks into one row as it does the
	// root's (Tags.same compares members by identity).
	ev.Member, ev.Stored = f.tags, nil
	f.root.conv.emit(ev)
}

// step shows the child's progress in the parent's task call.
func (f *memberFront) step(title string) {
	if f.progress == nil {
		return
	}
	f.mu.Lock()
	f.steps = append(f.steps, "• "+title)
	if len(f.steps) > 10 {
		f.steps = f.steps[len(f.steps)-10:]
	}
	text := f.m.Name + ":\n" + strings.Join(f.steps, "\n")
	f.mu.Unlock()
	f.progress([]tool.Content{textContent(text)})
}

// usage counts a child response's tokens for its member and the tree, adds
// its cost to the root's, and shows the root's meter with the totals.
func (f *memberFront) usage(u Usage) {
	root := f.root
	tm := root.sub.team
	delta, priced := tm.addUsage(f.m, u)
	in, out := tm.totals()
	// The reading is the root's meter; its Tokens are the child's
	// response (the last one any model gave), so the session's token
	// totals, live and folded from the log, count the sub-agents'.
	ev := Event{Kind: EventUsage, Usage: &Usage{Used: root.conv.used(), Size: root.settings.view().window, Tokens: u.Tokens},
		Tags: Tags{SubagentUsage: &TokenTotals{InputTokens: in, OutputTokens: out}}}
	if u.Tokens != nil {
		root.conv.addTokens(*u.Tokens)
	}
	if priced {
		total := root.conv.addCost(delta)
		ev.Usage.CostUSD = &total
	}
	root.conv.emit(ev)
}

func (f *memberFront) RequestPermission(ctx context.Context, call ToolCall) (Answer, error) {
	call.ID = f.prefix + call.ID
	call.Title = "[" + f.m.Name + "] " + call.Title
	call.Member = f.tags
	return f.root.front.RequestPermission(ctx, call)
}

// memberAsker asks a sub-agent's ask_user and exit_plan questions through
// the root session's front end, about the child's tool call as the editor
// knows it (its id prefixed) and titled with the member's name, like its
// permission questions.
type memberAsker struct {
	tool.Asker
	prefix, name string
}

func (a memberAsker) Elicit(ctx context.Context, e tool.Elicitation) (tool.ElicitResult, error) {
	if e.ToolCallID != "" {
		e.ToolCallID = a.prefix + e.ToolCallID
	}
	e.Message = "[" + a.name + "] " + e.Message
	return a.Asker.Elicit(ctx, e)
}

func (a memberAsker) Choose(ctx context.Context, q tool.ChoiceQuestion) (string, error) {
	if q.ToolCallID != "" {
		q.ToolCallID = a.prefix + q.ToolCallID
	}
	q.Title = "[" + a.name + "] " + q.Title
	return a.Asker.Choose(ctx, q)
}
