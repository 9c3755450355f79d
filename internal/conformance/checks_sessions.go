package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func checkSessionsNew(c *checkRun) {
	a, info, s1, ok := c.setup(c.reqs)
	if !ok {
		return
	}
	s2, _, err := c.newSession(a, nil)
	switch {
	case err != nil:
		c.fail("sessions.new-distinct", "second session/new: %v", err)
	case s1 == s2:
		c.fail("sessions.new-distinct", "two session/new calls both returned %q", s1)
	default:
		c.pass("sessions.new-distinct", "%s, %s", s1, s2)
	}

	r, _, err := c.callStep(a, "session/new", map[string]any{"cwd": "relative/dir", "mcpServers": []any{}})
	switch {
	case err != nil:
		c.fail("sessions.relative-cwd", "session/new with cwd relative/dir: %v", err)
	case r.Error == nil:
		c.fail("sessions.relative-cwd", "session/new accepted cwd \"relative/dir\": %s", short(r.Result))
	default:
		c.pass("sessions.relative-cwd", "rejected: %s", r.Error)
	}

	if !info.session("additionalDirectories") {
		c.skip("sessions.additional-directories", "sessionCapabilities.additionalDirectories not advertised")
		return
	}
	extra := filepath.Join(c.ws.root, "extra")
	_ = os.MkdirAll(extra, 0o700)
	if _, _, err := c.newSession(a, map[string]any{"additionalDirectories": []string{extra}}); err != nil {
		c.fail("sessions.additional-directories", "session/new with additionalDirectories: %v", err)
	} else {
		c.pass("sessions.additional-directories", "accepted")
	}
}

// listSessions calls session/list and returns the ids, or an error naming what is wrong.
func (c *checkRun) listSessions(a *agent) ([]string, error) {
	r, _, err := c.callStep(a, "session/list", map[string]any{})
	if err != nil {
		return nil, err
	}
	if r.Error != nil {
		return nil, fmt.Errorf("error %s", r.Error)
	}
	var res struct {
		Sessions *[]struct {
			SessionID string `json:"sessionId"`
		} `json:"sessions"`
	}
	if json.Unmarshal(r.Result, &res) != nil || res.Sessions == nil {
		return nil, fmt.Errorf("result has no sessions array: %s", short(r.Result))
	}
	var ids []string
	for _, s := range *res.Sessions {
		ids = append(ids, s.SessionID)
	}
	return ids, nil
}

func checkSessionsManage(c *checkRun) {
	a, info, s1, ok := c.setup(c.reqs)
	if !ok {
		return
	}
	if info.session("list") {
		if ids, err := c.listSessions(a); err != nil {
			c.fail("sessions.list", "session/list: %v", err)
		} else {
			c.pass("sessions.list", "%d session(s)", len(ids))
		}
	} else {
		c.skip("sessions.list", "sessionCapabilities.list not advertised")
	}

	listed := func(sid string) (bool, string) {
		if !info.session("list") {
			return true, ""
		}
		ids, err := c.listSessions(a)
		if err != nil || !slices.Contains(ids, sid) {
			return false, "session/list does not show the new session (not persisted without a turn), and forking or deleting an active or unknown session is implementation-defined"
		}
		return true, ""
	}

	if !info.session("fork") {
		c.skip("sessions.fork", "sessionCapabilities.fork not advertised")
	} else if ok, why := listed(s1); !ok {
		c.skip("sessions.fork", "%s", why)
	} else {
		r, _, err := c.callStep(a, "session/fork", map[string]any{"sessionId": s1, "cwd": c.ws.cwd, "mcpServers": []any{}})
		var res struct {
			SessionID string `json:"sessionId"`
		}
		switch {
		case err != nil:
			c.fail("sessions.fork", "session/fork: %v", err)
		case r.Error != nil:
			c.fail("sessions.fork", "session/fork: error %s", r.Error)
		case json.Unmarshal(r.Result, &res) != nil || res.SessionID == "" || res.SessionID == s1:
			c.fail("sessions.fork", "session/fork result lacks a new sessionId: %s", short(r.Result))
		default:
			c.pass("sessions.fork", "forked %s → %s", s1, res.SessionID)
		}
	}

	if info.session("close") {
		closeCheck(c, a)
	} else {
		c.skip("sessions.close", "sessionCapabilities.close not advertised")
	}

	if !info.session("delete") {
		c.skip("sessions.delete", "sessionCapabilities.delete not advertised")
		return
	}
	// Delete a stored session from a fresh process: deleting an active one is implementation-defined.
	victim, _, err := c.newSession(a, nil)
	if err != nil {
		c.fail("sessions.delete", "%v", err)
		return
	}
	a.stop(2 * time.Second)
	b, _, err := c.open()
	if err != nil {
		c.fail("sessions.delete", "second process: %v", err)
		return
	}
	a = b
	if ok, why := listed(victim); !ok {
		c.skip("sessions.delete", "%s", why)
		return
	}
	r, _, err := c.callStep(a, "session/delete", map[string]any{"sessionId": victim})
	switch {
	case err != nil:
		c.fail("sessions.delete", "session/delete: %v", err)
		return
	case r.Error != nil:
		c.fail("sessions.delete", "session/delete of listed session %s: error %s", victim, r.Error)
		return
	case !isObject(r.Result):
		c.fail("sessions.delete", "session/delete result %s, want an object", short(r.Result))
		return
	}
	if !info.session("list") {
		c.pass("sessions.delete", "deleted (session/list not advertised, so not cross-checked)")
		return
	}
	ids, err := c.listSessions(a)
	switch {
	case err != nil:
		c.fail("sessions.delete", "session/list after delete: %v", err)
	case slices.Contains(ids, victim):
		c.fail("sessions.delete", "session/list still lists deleted %s", victim)
	default:
		c.pass("sessions.delete", "deleted %s from a fresh process; session/list no longer has it", victim)
	}
}

func closeCheck(c *checkRun, a *agent) {
	sid, _, err := c.newSession(a, nil)
	if err != nil {
		c.fail("sessions.close", "%v", err)
		return
	}
	r, _, err := c.callStep(a, "session/close", map[string]any{"sessionId": sid})
	switch {
	case err != nil:
		c.fail("sessions.close", "session/close: %v", err)
		return
	case r.Error != nil:
		c.fail("sessions.close", "session/close: error %s", r.Error)
		return
	case !isObject(r.Result):
		c.fail("sessions.close", "session/close result %s, want an object", short(r.Result))
		return
	}
	ctx, cancel := c.step()
	defer cancel()
	id, _ := a.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{textBlock(c.promptText())}})
	p, _, err := a.await(ctx, id)
	switch {
	case err != nil:
		c.fail("sessions.close", "prompt to the closed session: %v", err)
	case p.Error == nil:
		c.fail("sessions.close", "a prompt to closed session %s succeeded: %s", sid, short(p.Result))
	default:
		c.pass("sessions.close", "closed; a later prompt got %s", p.Error)
	}
}

// historyKinds are the updates a load replays and a resume must not.
var historyKinds = map[string]bool{"user_message_chunk": true, "agent_message_chunk": true,
	"agent_thought_chunk": true, "tool_call": true, "tool_call_update": true, "plan": true}

func checkSessionsLoad(c *checkRun) {
	a, info, sid, ok := c.setup(c.reqs)
	if !ok {
		return
	}
	load, resume := info.AgentCapabilities.LoadSession, info.session("resume")
	if !load {
		c.skip("sessions.load", "loadSession not advertised")
	}
	if !resume {
		c.skip("sessions.resume", "sessionCapabilities.resume not advertised")
	}
	if !load && !resume {
		return
	}
	// Give the session some history, then end the process: load and resume run in fresh ones.
	history := false
	t, err := c.prompt(a, sid, []any{textBlock(c.promptText())}, nil)
	switch {
	case err != nil:
		c.failAll(c.reqs, "prompt to build history: %v", err)
		return
	case t.refused == nil:
		history = true
	case !needsAuth(t.refused):
		c.failAll(c.reqs, "prompt to build history refused: %s", t.refused)
		return
	}
	if !history && info.session("list") {
		if ids, err := c.listSessions(a); err == nil && !slices.Contains(ids, sid) {
			c.skipAll(c.reqs, "no turn was possible and session/list does not show the session: nothing is stored to load or resume")
			return
		}
	}
	a.stop(2 * time.Second)

	params := map[string]any{"sessionId": sid, "cwd": c.ws.cwd, "mcpServers": []any{}}
	if load {
		loadCheck(c, params, history)
	}
	if resume {
		resumeCheck(c, params)
	}
}

func loadCheck(c *checkRun, params map[string]any, history bool) {
	const id = "sessions.load"
	sid := params["sessionId"].(string)
	b, _, err := c.open()
	if err != nil {
		c.fail(id, "second process: %v", err)
		return
	}
	r, before, err := c.callStep(b, "session/load", params)
	if err != nil {
		c.fail(id, "session/load: %v", err)
		return
	}
	if r.Error != nil {
		c.fail(id, "session/load: error %s", r.Error)
		return
	}
	if !isObject(r.Result) {
		c.fail(id, "session/load answered %s; the schema wants an object", short(r.Result))
		return
	}
	replayed := 0
	for _, m := range before {
		if s, kind := m.update(); s == sid && historyKinds[kind] {
			replayed++
		}
	}
	late := lateContent(b.collect(c.ctx, 300*time.Millisecond), sid)
	switch {
	case len(late) > 0:
		c.fail(id, "%d history update(s) arrived after the load response, e.g. %s", len(late), short(late[0].Raw))
	case history && replayed == 0:
		c.fail(id, "the session had a turn, but session/load replayed nothing before answering")
	case history:
		c.pass(id, "replayed %d update(s) before answering %s", replayed, short(r.Result))
	default:
		c.pass(id, "answered %s (no turn was possible, so replay was not checked)", short(r.Result))
	}
}

func resumeCheck(c *checkRun, params map[string]any) {
	const id = "sessions.resume"
	sid := params["sessionId"].(string)
	b, _, err := c.open()
	if err != nil {
		c.fail(id, "third process: %v", err)
		return
	}
	r, before, err := c.callStep(b, "session/resume", params)
	if err != nil {
		c.fail(id, "session/resume: %v", err)
		return
	}
	if r.Error != nil {
		c.fail(id, "session/resume: error %s", r.Error)
		return
	}
	if !isObject(r.Result) {
		c.fail(id, "session/resume answered %s; the schema wants an object", short(r.Result))
		return
	}
	var replays []string
	for _, m := range append(before, b.collect(c.ctx, 300*time.Millisecond)...) {
		if s, kind := m.update(); s == sid && historyKinds[kind] {
			replays = append(replays, kind)
		}
	}
	if len(replays) > 0 {
		c.fail(id, "session/resume replayed history: %s", strings.Join(replays, ", "))
		return
	}
	c.pass(id, "answered %s, replayed nothing", short(r.Result))
}
