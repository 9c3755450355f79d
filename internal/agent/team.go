package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/corvid-agent/corvid/internal/tool"
)

// Agent teams (CodeBuddy's protocol, C34–C39). Every sub-agent of a session
// is a member of its team: one the model created with the team tool, or
// else the automatic team ("subagents", isAutoTeam) that the first task
// call creates. Each change is pushed as an EventTeam (a front end spells
// it: CodeBuddy's teamUpdate); the updates are recorded in the session's
// log, so session/load knows the team's last status and pushes it after
// the replay.

// autoTeamName names the team of sub-agents started without a team.
const autoTeamName = "subagents"

// Member statuses.
const (
	statusIdle        = "idle"        // a member of a created team that has not run yet
	statusRunning     = "running"     // working on a task
	statusCompleted   = "completed"   // its last task ended with an answer
	statusFailed      = "failed"      // its last task failed (model error, bad profile or model)
	statusCancelled   = "cancelled"   // its last task was cancelled
	statusInterrupted = "interrupted" // it was running when corvid stopped
)

var memberColors = []string{"blue", "green", "purple", "orange", "pink", "cyan", "yellow", "red"}

// tokenUsage is a member's token count (C35).
type tokenUsage struct {
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	LastContextWindow int64 `json:"lastContextWindow"`
}

// member is one team member, as member_status_change shows it.
type member struct {
	Name          string     `json:"name"`
	Color         string     `json:"color"`
	Description   string     `json:"description"`
	Status        string     `json:"status"`
	TaskID        string     `json:"taskId"`
	SessionID     string     `json:"sessionId"`
	TokenUsage    tokenUsage `json:"tokenUsage"`
	ToolCallCount int        `json:"toolCallCount"`
	// Profile is the agent profile the member runs with ("" = none).
	Profile string `json:"profile,omitempty"`

	lastCost float64 // the running child's cost so far
}

// team is a root session's roster. Its mutex guards its fields; pushMu
// keeps team updates in the order of the changes they report (it is held
// across a change and its pushes, never with mu).
type team struct {
	mu      sync.Mutex
	name    string // "" when there is no team
	auto    bool
	members []*member
	next    int // automatic member names given
	in, out int64
	live    memberRuns // every member session run in this process (members.go)

	pushMu sync.Mutex
}

// start marks a member running a task, adding it (and the automatic team)
// as needed; created names a team this call created.
func (t *team) start(name, description, taskID, sessionID string) (m *member, created string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.name == "" {
		t.name, t.auto, created = autoTeamName, true, autoTeamName
	}
	if name == "" {
		for name == "" || t.find(name) != nil {
			t.next++
			name = fmt.Sprintf("agent-%d", t.next)
		}
	}
	m = t.find(name)
	if m != nil && m.Status == statusRunning {
		return nil, created, fmt.Errorf("team member %q is already running a task; wait for it or use another name", name)
	}
	if m == nil {
		m = &member{Name: name, Color: memberColors[len(t.members)%len(memberColors)]}
		t.members = append(t.members, m)
	}
	if m.Description == "" || t.auto {
		m.Description = description
	}
	m.Status, m.TaskID, m.SessionID, m.lastCost = statusRunning, taskID, sessionID, 0
	return m, created, nil
}

func (t *team) find(name string) *member {
	for _, m := range t.members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

func (t *team) finish(m *member, status string) {
	t.mu.Lock()
	m.Status = status
	t.mu.Unlock()
}

func (t *team) countToolCall(m *member) {
	t.mu.Lock()
	m.ToolCallCount++
	t.mu.Unlock()
}

// addUsage counts a member's response; it returns the cost it added (priced
// false when the model has no price).
func (t *team) addUsage(m *member, u Usage) (delta float64, priced bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tk := u.Tokens; tk != nil {
		in := tk.InputTokens + tk.CacheReadTokens + tk.CacheWriteTokens
		m.TokenUsage.InputTokens += in
		m.TokenUsage.OutputTokens += tk.OutputTokens
		t.in += in
		t.out += tk.OutputTokens
	}
	m.TokenUsage.LastContextWindow = u.Used
	if u.CostUSD != nil {
		delta, m.lastCost, priced = *u.CostUSD-m.lastCost, *u.CostUSD, true
	}
	return delta, priced
}

// totals are the tokens every member used in this process.
func (t *team) totals() (in, out int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.in, t.out
}

// status is the member_status_change payload (nil without a team).
func (t *team) status() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.name == "" {
		return nil
	}
	members := make([]member, 0, len(t.members))
	for _, m := range t.members {
		members = append(members, *m)
	}
	return map[string]any{"type": "member_status_change", "teamName": t.name, "isAutoTeam": t.auto, "members": members}
}

func teamCreated(name string) map[string]any {
	return map[string]any{"type": "team_created", "teamName": name}
}

func teamDeleted(name string) map[string]any {
	return map[string]any{"type": "team_deleted", "teamName": name}
}

// create makes a new team of idle members; replaced names the automatic
// team it replaces.
func (t *team) create(name string, members []teamMemberInput) (replaced string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.name != "" && !t.auto {
		return "", fmt.Errorf("team %q exists; delete it first", t.name)
	}
	if t.running() {
		return "", errors.New("sub-agents are still running; create the team when they are done")
	}
	replaced = t.name
	t.name, t.auto, t.members = name, false, nil
	for _, in := range members {
		color := in.Color
		if color == "" {
			color = memberColors[len(t.members)%len(memberColors)]
		}
		t.members = append(t.members, &member{Name: in.Name, Color: color, Description: in.Description, Status: statusIdle, Profile: in.Profile})
	}
	return replaced, nil
}

// remove deletes the team; it returns its name.
func (t *team) remove() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.name == "" {
		return "", errors.New("there is no team")
	}
	if t.running() {
		return "", errors.New("team members are still running")
	}
	name := t.name
	t.name, t.auto, t.members = "", false, nil
	return name, nil
}

func (t *team) running() bool {
	for _, m := range t.members {
		if m.Status == statusRunning {
			return true
		}
	}
	return false
}

// restore takes a stored member_status_change as the roster; a member that
// was running when corvid stopped is interrupted.
func (t *team) restore(snapshot map[string]any) {
	b, err := json.Marshal(snapshot)
	if err != nil {
		return
	}
	var st struct {
		TeamName   string   `json:"teamName"`
		IsAutoTeam bool     `json:"isAutoTeam"`
		Members    []member `json:"members"`
	}
	if json.Unmarshal(b, &st) != nil || st.TeamName == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.name, t.auto, t.members = st.TeamName, st.IsAutoTeam, nil
	for i := range st.Members {
		m := st.Members[i]
		if m.Status == statusRunning {
			m.Status = statusInterrupted
		}
		t.members = append(t.members, &m)
	}
	t.next = len(t.members)
}

// pushTeam records and shows a team update.
func (s *Session) pushTeam(payload map[string]any) {
	if payload != nil {
		s.conv.emit(Event{Kind: EventTeam, Tags: Tags{Team: payload}})
	}
}

// pushTeamStatus records and shows the team's current status.
func (s *Session) pushTeamStatus() {
	tm := s.sub.team
	tm.pushMu.Lock()
	defer tm.pushMu.Unlock()
	s.pushTeam(tm.status())
}

// teamMemberInput is one member of the team tool's create action.
type teamMemberInput struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Profile     string `json:"profile,omitempty"`
	Color       string `json:"color,omitempty"`
}

//go:embed team.md
var teamDescription string

// teamTool creates and deletes the session's team.
type teamTool struct{ s *Session }

func (teamTool) Name() string { return "team" }

func (teamTool) Description() string { return teamDescription }

func (teamTool) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"action":{"type":"string","enum":["create","delete","status","stop"]},` +
		`"teamName":{"type":"string","description":"The team's name (create)"},` +
		`"name":{"type":"string","description":"The background worker to stop (stop)"},` +
		`"members":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"description":{"type":"string"},"profile":{"type":"string"},"color":{"type":"string"}},"required":["name"]}}},` +
		`"required":["action"]}`)
}

type teamInput struct {
	Action   string            `json:"action"`
	TeamName string            `json:"teamName"`
	Members  []teamMemberInput `json:"members"`
	Name     string            `json:"name,omitempty"` // stop: a worker's name or id
}

func (teamTool) Describe(_ *tool.Env, input json.RawMessage) tool.Preview {
	var in teamInput
	_ = json.Unmarshal(input, &in)
	title := "Team: " + in.Action
	if in.TeamName != "" {
		title += " " + in.TeamName
	}
	return tool.Preview{Kind: tool.KindOther, Title: title, Access: tool.AccessNone}
}

func (t teamTool) Run(_ context.Context, _ *tool.Env, call tool.Call) (tool.Result, error) {
	var in teamInput
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return tool.ErrorResult(`team needs {"action": "create" | "delete" | "status", ...}`), nil
	}
	s := t.s
	tm := s.sub.team
	ok := func(msg string) (tool.Result, error) {
		return tool.Result{Output: msg, Content: []tool.Content{textContent(msg)}}, nil
	}
	switch in.Action {
	case "create":
		name := strings.TrimSpace(in.TeamName)
		if name == "" || len(in.Members) == 0 {
			return tool.ErrorResult("create needs a teamName and at least one member"), nil
		}
		seen := map[string]bool{}
		for _, m := range in.Members {
			if strings.TrimSpace(m.Name) == "" || seen[m.Name] {
				return tool.ErrorResult("every member needs a name of its own"), nil
			}
			seen[m.Name] = true
		}
		tm.pushMu.Lock()
		replaced, err := tm.create(name, in.Members)
		if err == nil {
			if replaced != "" {
				s.pushTeam(teamDeleted(replaced))
			}
			s.pushTeam(teamCreated(name))
			s.pushTeam(tm.status())
		}
		tm.pushMu.Unlock()
		if err != nil {
			return tool.ErrorResult(err.Error()), nil
		}
		return ok(fmt.Sprintf("Team %q created with %d members; run one with task {name: ...}.", name, len(in.Members)))
	case "delete":
		tm.pushMu.Lock()
		name, err := tm.remove()
		if err == nil {
			s.pushTeam(teamDeleted(name))
		}
		tm.pushMu.Unlock()
		if err != nil {
			return tool.ErrorResult(err.Error()), nil
		}
		return ok(fmt.Sprintf("Team %q deleted.", name))
	case "stop":
		if !s.StopWorker(in.Name) {
			return tool.ErrorResult(fmt.Sprintf("no background worker %q is running", in.Name)), nil
		}
		return ok(fmt.Sprintf("Background worker %s stopped.", in.Name))
	case "status":
		st := tm.status()
		if st == nil {
			return ok("There is no team.")
		}
		b, _ := json.MarshalIndent(st, "", "  ")
		return ok(string(b))
	}
	return tool.ErrorResult(fmt.Sprintf("unknown action %q (create, delete, status or stop)", in.Action)), nil
}
