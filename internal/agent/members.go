package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/corvid-agent/corvid/internal/store"
)

// Team members and workers as sessions (CodeBuddy's C40, docs/serve.md).
// A sub-agent's updates are recorded in its root session's log, tagged
// with Tags.Member (memberFront); a member's session is the view of that
// log and of the root's live events that keeps the member's own updates
// and those of the sub-agents it started. Its id names the root
// (memberIDSep), so a member of a session no process holds is found in
// the store without an index.

// memberIDSep joins a root session's id and a member's own part:
// "sess_….sub_…".
const memberIDSep = ".sub_"

// newMemberID is the session id of a new sub-agent or worker of s's tree.
func (s *Session) newMemberID() string {
	return s.sub.root.ID + "." + NewID("sub")
}

// MemberRoot returns the root session a member session id belongs to; ok
// is false for an id that is not a member's.
func MemberRoot(id string) (root string, ok bool) {
	i := strings.LastIndex(id, memberIDSep)
	if i <= 0 || len(id) == i+len(memberIDSep) {
		return "", false
	}
	return id[:i], true
}

// MemberInfo describes a member's session.
type MemberInfo struct {
	ID          string
	RootID      string // the session whose team the member is in
	Name        string
	Description string
	Color       string
	Status      string // idle, running, completed, failed, cancelled, interrupted
}

// memberRuns are the member sessions a root session ran in this process,
// by id: each task run of a member is one.
type memberRuns struct {
	runs map[string]*memberRun
}

type memberRun struct {
	name  string
	child *Session // nil once its task ended
}

// track records that member m runs child (its session id child.ID).
func (t *team) track(m *member, child *Session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live.runs == nil {
		t.live.runs = map[string]*memberRun{}
	}
	t.live.runs[child.ID] = &memberRun{name: m.Name, child: child}
}

// untrack records that the run id ended.
func (t *team) untrack(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.live.runs[id]; r != nil {
		r.child = nil
	}
}

// roster returns the members that have a session, as MemberInfo.
func roster(rootID string, members []member) []MemberInfo {
	var out []MemberInfo
	for _, m := range members {
		if m.SessionID == "" {
			continue // a member of a created team that has not run yet
		}
		out = append(out, MemberInfo{ID: m.SessionID, RootID: rootID, Name: m.Name, Description: m.Description, Color: m.Color, Status: m.Status})
	}
	return out
}

// Members are the sessions of s's team members and workers: the current
// run of each (nil without a team).
func (s *Session) Members() []MemberInfo {
	tm := s.sub.team
	tm.mu.Lock()
	members := make([]member, 0, len(tm.members))
	for _, m := range tm.members {
		members = append(members, *m)
	}
	tm.mu.Unlock()
	return roster(s.ID, members)
}

// member finds member session id among s's roster and runs.
func (s *Session) member(id string) (MemberInfo, bool) {
	for _, m := range s.Members() {
		if m.ID == id {
			return m, true
		}
	}
	tm := s.sub.team
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if r := tm.live.runs[id]; r != nil {
		status := statusCompleted
		if r.child != nil {
			status = statusRunning
		}
		return MemberInfo{ID: id, RootID: s.ID, Name: r.name, Status: status}, true
	}
	return MemberInfo{}, false
}

// CancelMember cancels the running task of member session id (a worker
// stops as `team stop` stops it; a foreground member's task call ends as
// cancelled and its parent goes on). It reports whether one was running.
func (s *Session) CancelMember(id string) bool {
	tm := s.sub.team
	tm.mu.Lock()
	var child *Session
	if r := tm.live.runs[id]; r != nil {
		child = r.child
	}
	tm.mu.Unlock()
	if child == nil {
		return false
	}
	child.Cancel()
	return true
}

// memberFilter keeps the updates of one member's session: those a
// sub-agent tagged with the member's id, or with the id of a sub-agent it
// (or one of those) started. Before the member's first update it puts the
// task's prompt, from the parent's task call, as the session's user
// message. It is used under the conversation's show lock, or by one
// replay, never concurrently.
type memberFilter struct {
	id      string
	ids     map[string]bool
	matched int
	name    string            // from the first update kept
	prompts map[string]string // task calls' prompts by tool-call id, until the first update
}

func newMemberFilter(id string) *memberFilter {
	return &memberFilter{id: id, ids: map[string]bool{id: true}, prompts: map[string]string{}}
}

// take hands ev to out when it is the member's.
func (f *memberFilter) take(ev Event, out func(Event)) {
	sub := ev.Member
	if !f.keep(sub) {
		f.notePrompt(ev)
		return
	}
	if f.prompts != nil && sub.ID == f.id {
		if p := f.prompts[sub.ParentToolCallID]; p != "" {
			out(Event{Kind: EventUserChunk, MessageID: "user_" + f.id[strings.LastIndex(f.id, memberIDSep)+1:],
				Content: &Block{Type: BlockText, Text: p}, Tags: Tags{Member: sub}})
		}
		f.prompts = nil
	}
	out(ev)
}

// notePrompt remembers a task call's prompt.
func (f *memberFilter) notePrompt(ev Event) {
	tc := ev.ToolCall
	if f.prompts == nil || tc == nil || tc.Name != "task" || len(tc.RawInput) == 0 {
		return
	}
	var in struct {
		Prompt string `json:"prompt"`
	}
	if json.Unmarshal(tc.RawInput, &in) == nil && in.Prompt != "" {
		f.prompts[tc.ID] = in.Prompt
	}
}

func (f *memberFilter) keep(sub *Member) bool {
	if sub == nil || sub.ID == "" {
		return false
	}
	id := sub.ID
	ok := f.ids[id]
	if !ok {
		parent := sub.ParentToolCallID
		for p := range f.ids {
			if strings.HasPrefix(parent, p+"/") {
				f.ids[id], ok = true, true // a sub-agent the member started
				break
			}
		}
	}
	if ok {
		if f.matched == 0 {
			f.name = sub.Name
		}
		f.matched++
	}
	return ok
}

// memberFan is an attached front end that gets only one member's events.
type memberFan struct {
	f  *memberFilter
	to FrontEnd
}

func (m memberFan) Emit(ev Event) { m.f.take(ev, m.to.Emit) }

// RequestPermission is never called on an attached front end (questions
// go to the session's own); it refuses.
func (memberFan) RequestPermission(context.Context, ToolCall) (Answer, error) {
	return RejectOnce, nil
}

// AttachMember makes front a front end of member session id of the live
// root session s, as Attach does for s itself: the member's stored
// updates through replay (nil: none, session/resume), then its live ones,
// none twice and none lost. An id that is not one of s's members is
// ErrSessionNotFound.
func (s *Session) AttachMember(ctx context.Context, id string, front FrontEnd, replay func(Event), textMax int) (detach func(), info MemberInfo, err error) {
	if root, ok := MemberRoot(id); !ok || root != s.ID || s.sub.root != s {
		return nil, MemberInfo{}, ErrSessionNotFound
	}
	info, known := s.member(id)
	f := newMemberFilter(id)
	sink := func(Event) {}
	if replay != nil {
		sink = replay
	}
	var rep func(Event)
	// What the replay found, read on this goroutine after Attach (live
	// events change f under the show lock meanwhile).
	var found int
	var name string
	if replay != nil || !known {
		// Without a replay, an id the roster has forgotten (a run of an
		// earlier process) is still looked for in the log.
		rep = func(ev Event) {
			f.take(ev, sink)
			found, name = f.matched, f.name
		}
	}
	detach, err = s.Attach(ctx, memberFan{f: f, to: front}, rep, textMax)
	if err != nil {
		return nil, MemberInfo{}, err
	}
	if !known {
		if found == 0 {
			detach()
			return nil, MemberInfo{}, ErrSessionNotFound
		}
		info = MemberInfo{ID: id, RootID: s.ID, Name: name, Status: statusCompleted}
	}
	return detach, info, nil
}

// ReplayMember replays the stored updates of member session id, whose root
// session no front end of this process holds live. An id whose root is
// not stored, or whose root's log has neither that member in its team nor
// an update of it, is ErrSessionNotFound.
func (a *Agent) ReplayMember(ctx context.Context, id string, textMax int, replay func(Event)) (MemberInfo, error) {
	rootID, ok := MemberRoot(id)
	if !ok {
		return MemberInfo{}, ErrSessionNotFound
	}
	st, err := a.openStore()
	if err != nil {
		return MemberInfo{}, err
	}
	if st == nil {
		return MemberInfo{}, ErrSessionNotFound
	}
	f := newMemberFilter(id)
	sink := func(Event) {}
	if replay != nil {
		sink = replay
	}
	lg, err := FoldStream(ctx, st, rootID, textMax, func(ev Event) { f.take(ev, sink) })
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return MemberInfo{}, ErrSessionNotFound
		}
		return MemberInfo{}, storeFailure("read the events", err)
	}
	for _, m := range roster(rootID, storedRoster(lg.Team)) {
		if m.ID == id {
			if m.Status == statusRunning {
				m.Status = statusInterrupted // nobody here runs it
			}
			return m, nil
		}
	}
	if f.matched == 0 {
		return MemberInfo{}, ErrSessionNotFound
	}
	return MemberInfo{ID: id, RootID: rootID, Name: f.name, Status: statusCompleted}, nil
}

// StoredMembers are the member sessions of stored session rootID's team as
// its log last recorded it (members that were running are interrupted).
func (a *Agent) StoredMembers(ctx context.Context, rootID string) ([]MemberInfo, error) {
	st, err := a.openStore()
	if err != nil || st == nil {
		return nil, err
	}
	lg, err := FoldStored(ctx, st, rootID)
	if err != nil {
		return nil, storeFailure("read the events", err)
	}
	out := roster(rootID, storedRoster(lg.Team))
	for i := range out {
		if out[i].Status == statusRunning {
			out[i].Status = statusInterrupted
		}
	}
	return out, nil
}

// storedRoster decodes a stored member_status_change's members.
func storedRoster(snapshot map[string]any) []member {
	if snapshot == nil {
		return nil
	}
	b, err := json.Marshal(snapshot)
	if err != nil {
		return nil
	}
	var st struct {
		Members []member `json:"members"`
	}
	if json.Unmarshal(b, &st) != nil {
		return nil
	}
	return st.Members
}
