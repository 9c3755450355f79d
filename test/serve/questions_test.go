package serve

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Questions in a shared session (docs/serve.md, "Questions"): each kind
// goes to every attached client that can answer it, the first answer
// wins, the others are withdrawn, and every attachment is shown the
// outcome with who answered (_meta corvid.dev/answeredBy).

// initAs initializes c as the client named in info with caps.
func initAs(c *client, info, caps map[string]any) {
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps, "clientInfo": info})
}

func info(name, title, version string) map[string]any {
	m := map[string]any{"name": name, "version": version}
	if title != "" {
		m["title"] = title
	}
	return m
}

// answer answers the agent's request req with result.
func (c *client) answer(req map[string]any, result any) {
	_ = c.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": result})
}

// answeredUpdate waits for the tool_call_update of session sid on c that
// carries corvid.dev/answeredBy, and returns the update.
func (c *client) answeredUpdate(sid string) map[string]any {
	c.t.Helper()
	var got map[string]any
	ok := c.waitNote("session/update", func(p map[string]any) bool {
		u, _ := p["update"].(map[string]any)
		meta, _ := u["_meta"].(map[string]any)
		if p["sessionId"] == sid && u["sessionUpdate"] == "tool_call_update" && meta["corvid.dev/answeredBy"] != nil {
			got = u
			return true
		}
		return false
	})
	if !ok {
		c.t.Fatalf("no tool_call_update with corvid.dev/answeredBy; got %v", c.note)
	}
	return got
}

func answeredBy(u map[string]any) map[string]any {
	m, _ := u["_meta"].(map[string]any)["corvid.dev/answeredBy"].(map[string]any)
	return m
}

// withdrawn waits for $/cancel_request of req on c.
func (c *client) withdrawn(req map[string]any) {
	c.t.Helper()
	if !c.waitNote("$/cancel_request", func(p map[string]any) bool { return p["requestId"] == req["id"] }) {
		c.t.Fatalf("the question %v was not withdrawn", req["id"])
	}
}

func TestPermissionAnswerIsShownToEveryAttachmentWithWhoAnswered(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a, b := dial(t, d.sock), dial(t, d.sock)
	initAs(a, info("client-a", "", "1.0"), map[string]any{})
	initAs(b, info("client-b", "Client B", "2.0.1"), map[string]any{})
	sid := newSession(a, dir)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	qa, qb := a.waitRequest("session/request_permission"), b.waitRequest("session/request_permission")
	b.answer(qb, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
	a.withdrawn(qa)
	want := info("client-b", "Client B", "2.0.1")
	for name, c := range map[string]*client{"A": a, "B": b} {
		u := c.answeredUpdate(sid)
		if got := answeredBy(u); !reflect.DeepEqual(got, want) || u["status"] != "in_progress" {
			t.Fatalf("%s was shown %v; want status in_progress, answeredBy %v", name, u, want)
		}
	}
	waitExact(t, a, sid, "I will create notes.txt.Done: notes.txt now exists.")

	// Both leave; a third client loads the session from the store: the
	// replay says who answered.
	a.conn.Close()
	b.conn.Close()
	c := dial(t, d.sock)
	initialize(c)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
		if strings.Contains(c.text(sid), "Done: notes.txt now exists.") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := answeredBy(c.answeredUpdate(sid)); !reflect.DeepEqual(got, want) {
		t.Fatalf("the replay says %v answered; want %v", got, want)
	}
}

// askScript asks one single-choice question with ask_user.
func askScript() map[string]any {
	return map[string]any{"responses": []any{
		map[string]any{"parts": []any{
			map[string]any{"type": "text", "text": "Let me ask."},
			map[string]any{"type": "tool_call", "name": "ask_user", "input": map[string]any{"questions": []any{map[string]any{
				"header": "Colour", "question": "Which colour?", "options": []any{map[string]any{"label": "Red"}, map[string]any{"label": "Blue"}}}}}},
		}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "Blue it is."}}},
	}}
}

func TestAskUserChoiceGoesToEveryAttachmentAndTheFirstAnswerWins(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+writeScript(t, dir, askScript()), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a, b := dial(t, d.sock), dial(t, d.sock)
	initAs(a, info("client-a", "", "1.0"), map[string]any{})
	initAs(b, info("client-b", "", "2.0"), map[string]any{})
	sid := newSession(a, dir)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	// B prompts: the question goes to A too, and A answers it.
	b.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	qa, qb := a.waitRequest("session/request_permission"), b.waitRequest("session/request_permission")
	id := pendingQuestion(t, d, sid) // corvid respond could answer it too
	a.answer(qa, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "choice_2"}})
	b.withdrawn(qb)
	late := exec.Command(testkit.BuildCorvid(t), "respond", id, "1")
	late.Env = isolatedEnv(d.home)
	if out, err := late.CombinedOutput(); err == nil || !strings.Contains(string(out), "answered elsewhere, by client-a") {
		t.Fatalf("corvid respond after A answered: %v\n%q", err, out)
	}
	for name, c := range map[string]*client{"A": a, "B": b} {
		u := c.answeredUpdate(sid)
		if got := answeredBy(u); !reflect.DeepEqual(got, info("client-a", "", "1.0")) || u["status"] != "completed" {
			t.Fatalf("%s was shown %v; want the completed call answered by client-a", name, u)
		}
	}
	waitExact(t, b, sid, "Let me ask.Blue it is.")
}

// planScript leaves plan mode with exit_plan.
func planScript() map[string]any {
	return map[string]any{"responses": []any{
		map[string]any{"parts": []any{
			map[string]any{"type": "text", "text": "Here is the plan."},
			map[string]any{"type": "tool_call", "name": "exit_plan", "input": map[string]any{"plan": "1. Write notes.txt"}},
		}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "Approved."}}},
	}}
}

func TestExitPlanIsPutToAClientThatAttachesWhileItIsOpen(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+writeScript(t, dir, planScript()), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initAs(a, info("client-a", "", "1.0"), map[string]any{})
	sid := newSession(a, dir)
	a.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"})
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("plan it")})
	qa := a.waitRequest("session/request_permission")
	b := dial(t, d.sock)
	initAs(b, info("client-b", "", "2.0"), map[string]any{})
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	qb := b.waitRequest("session/request_permission")
	if qb["params"].(map[string]any)["toolCall"].(map[string]any)["toolCallId"] != qa["params"].(map[string]any)["toolCall"].(map[string]any)["toolCallId"] {
		t.Fatalf("B was asked %v; A %v", qb, qa)
	}
	b.answer(qb, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "choice_2"}}) // Approve, ask before changes
	a.withdrawn(qa)
	for name, c := range map[string]*client{"A": a, "B": b} {
		if got := answeredBy(c.answeredUpdate(sid)); !reflect.DeepEqual(got, info("client-b", "", "2.0")) {
			t.Fatalf("%s was told %v answered", name, got)
		}
	}
	waitExact(t, a, sid, "Here is the plan.Approved.")
}

// formScript asks two questions with ask_user: only a form can hold them.
func formScript() map[string]any {
	opts := []any{map[string]any{"label": "Red"}, map[string]any{"label": "Blue"}}
	return map[string]any{"responses": []any{
		map[string]any{"parts": []any{
			map[string]any{"type": "text", "text": "Two questions."},
			map[string]any{"type": "tool_call", "name": "ask_user", "input": map[string]any{"questions": []any{
				map[string]any{"header": "Colour", "question": "Which colour?", "options": opts},
				map[string]any{"header": "Shade", "question": "Which shade?", "options": opts},
			}}},
		}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "Thanks."}}},
	}}
}

func TestElicitationGoesOnlyToClientsThatAdvertisedIt(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+writeScript(t, dir, formScript()), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	forms := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	a, b, c := dial(t, d.sock), dial(t, d.sock), dial(t, d.sock)
	initAs(a, info("client-a", "", "1"), forms)
	initAs(b, info("client-b", "", "1"), map[string]any{}) // no elicitation
	initAs(c, info("client-c", "", "3"), forms)
	sid := newSession(b, dir)
	a.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	c.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	b.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	qa, qc := a.waitRequest("elicitation/create"), c.waitRequest("elicitation/create")
	c.answer(qc, map[string]any{"action": "accept", "content": map[string]any{"q1": "Blue", "q2": "Red"}})
	a.withdrawn(qa)
	for name, cl := range map[string]*client{"A": a, "B": b, "C": c} {
		if got := answeredBy(cl.answeredUpdate(sid)); !reflect.DeepEqual(got, info("client-c", "", "3")) {
			t.Fatalf("%s was told %v answered", name, got)
		}
	}
	waitExact(t, b, sid, "Two questions.Thanks.")
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.reqs {
		t.Fatalf("B, which advertised no elicitation, was asked %v", r)
	}
}

// listMeta is session sid's _meta in session/list on c.
func listMeta(t *testing.T, c *client, sid string) map[string]any {
	t.Helper()
	list := c.call("session/list", map[string]any{})
	for _, s := range list["sessions"].([]any) {
		if m := s.(map[string]any); m["sessionId"] == sid {
			meta, _ := m["_meta"].(map[string]any)
			return meta
		}
	}
	t.Fatalf("session/list lacks %s: %v", sid, list)
	return nil
}

func TestRespondAnswersAQuestionWhileClientsAreAttached(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initAs(a, info("client-a", "", "1.0"), map[string]any{})
	sid := newSession(a, dir)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	qa := a.waitRequest("session/request_permission")
	id := pendingQuestion(t, d, sid)

	// session/list says the session waits, with the id respond takes.
	b := dial(t, d.sock)
	initialize(b)
	w, _ := listMeta(t, b, sid)["corvid.dev/waiting"].([]any)
	if len(w) != 1 || w[0].(map[string]any)["requestId"] != id {
		t.Fatalf("corvid.dev/waiting: %v; want the question %s", w, id)
	}

	respond := exec.Command(testkit.BuildCorvid(t), "respond", id, "allow")
	respond.Env = isolatedEnv(d.home)
	if out, err := respond.CombinedOutput(); err != nil {
		t.Fatalf("corvid respond: %v\n%s", err, out)
	}
	a.withdrawn(qa)
	u := a.answeredUpdate(sid)
	if got := answeredBy(u); got["name"] != "corvid-respond" || got["title"] != "corvid respond" {
		t.Fatalf("answeredBy %v; want corvid respond", got)
	}
	waitExact(t, a, sid, "I will create notes.txt.Done: notes.txt now exists.")
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if m := listMeta(t, b, sid); m["corvid.dev/waiting"] != nil {
		t.Fatalf("still waiting after the answer: %v", m)
	}
}

func TestQuestionWithNoClientIsDeniedAfterTheInteractionTimeout(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	home, err := os.MkdirTemp("", "cs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	conf := filepath.Join(home, ".corvid", "config")
	if err := os.MkdirAll(conf, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "config.toml"), []byte("interaction_timeout = \"5s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemonIn(t, home, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	a.waitRequest("session/request_permission")
	a.conn.Close()
	pendingQuestion(t, d, sid) // corvid respond could answer it meanwhile
	got := replayAfter(t, d.sock, sid, dir, "Done: notes.txt now exists.", 15*time.Second)
	if !strings.Contains(got, "Done: notes.txt now exists.") {
		t.Fatalf("the turn did not end after the timeout: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !os.IsNotExist(err) {
		t.Fatalf("notes.txt was written without an answer: %v", err)
	}
	list := exec.Command(testkit.BuildCorvid(t), "respond", "--json")
	list.Env = isolatedEnv(d.home)
	out, _ := list.Output()
	var qs []map[string]any
	_ = json.Unmarshal(out, &qs)
	if len(qs) != 0 {
		t.Fatalf("still pending after the timeout: %s", out)
	}
}

// TestCancelFromAnotherClientWithdrawsTheOpenQuestion: A's turn asks A
// and B; B sends session/cancel: the turn ends cancelled and the question
// is withdrawn from both.
func TestCancelFromAnotherClientWithdrawsTheOpenQuestion(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a, b := dial(t, d.sock), dial(t, d.sock)
	initialize(a)
	initialize(b)
	sid := newSession(a, dir)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	answer := make(chan map[string]any, 1)
	go func() {
		answer <- a.callErrOrResult("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	}()
	qa, qb := a.waitRequest("session/request_permission"), b.waitRequest("session/request_permission")
	_ = b.enc.Encode(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
	select {
	case m := <-answer:
		if stopReason(m) != "cancelled" {
			t.Fatalf("A's prompt ended %v; want cancelled", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("B's session/cancel did not end A's turn")
	}
	a.withdrawn(qa)
	b.withdrawn(qb)
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !os.IsNotExist(err) {
		t.Fatalf("notes.txt was written: %v", err)
	}
}

// TestClientThatCannotAnswerIsToldHowToRespond: A sends no
// clientCapabilities (as old Gas City), so it is never sent a request; it
// is shown how to answer with corvid respond, while B is asked; the
// respond answer wins and B's question is withdrawn.
func TestClientThatCannotAnswerIsToldHowToRespond(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a, b := dial(t, d.sock), dial(t, d.sock)
	a.call("initialize", map[string]any{"protocolVersion": 1})
	initAs(b, info("client-b", "", "2"), map[string]any{})
	sid := newSession(a, dir)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	qb := b.waitRequest("session/request_permission")
	a.waitText(sid, "[corvid] Permission needed (request ")
	id := pendingQuestion(t, d, sid)
	if !strings.Contains(a.text(sid), "corvid respond "+id+" allow") {
		t.Fatalf("A was not told how to answer %s: %q", id, a.text(sid))
	}
	respond := exec.Command(testkit.BuildCorvid(t), "respond", id, "allow")
	respond.Env = isolatedEnv(d.home)
	if out, err := respond.CombinedOutput(); err != nil {
		t.Fatalf("corvid respond: %v\n%s", err, out)
	}
	b.withdrawn(qb)
	if got := answeredBy(b.answeredUpdate(sid)); got["name"] != "corvid-respond" {
		t.Fatalf("answeredBy %v; want corvid respond", got)
	}
	a.waitText(sid, "Done: notes.txt now exists.")
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.reqs {
		t.Fatalf("A, which cannot answer requests, was sent %v", r)
	}
}

// TestQuestionLeftWithNoClientGoesToTheNextThatAttaches: A's turn asks,
// A leaves without answering; B loads the session later, is asked, and
// its answer lets the turn go on.
func TestQuestionLeftWithNoClientGoesToTheNextThatAttaches(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	a.waitRequest("session/request_permission")
	a.conn.Close()
	pendingQuestion(t, d, sid)
	b := dial(t, d.sock)
	initAs(b, info("client-b", "", "2"), map[string]any{})
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	qb := b.waitRequest("session/request_permission")
	b.answer(qb, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
	if got := answeredBy(b.answeredUpdate(sid)); !reflect.DeepEqual(got, info("client-b", "", "2")) {
		t.Fatalf("answeredBy %v", got)
	}
	b.waitText(sid, "Done: notes.txt now exists.")
	if got, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(got) != "written by corvid\n" {
		t.Fatalf("notes.txt: %q %v", got, err)
	}
}

// TestSecondPromptIsRefusedOnEveryConnection: while A's turn runs, a
// prompt from A itself and one from B, which attached, get the same
// -32602 with error.data.details; the running turn is not disturbed.
func TestSecondPromptIsRefusedOnEveryConnection(t *testing.T) {
	d, dir, sid, a, answer := runningOnA(t)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	var msgs []string
	for name, c := range map[string]*client{"A": a, "B": b} {
		e := c.callErr("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("again")})
		data, _ := e["data"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) || data["details"] == nil {
			t.Fatalf("%s's second prompt: %v; want -32602 with error.data.details", name, e)
		}
		msgs = append(msgs, e["message"].(string))
	}
	if msgs[0] != msgs[1] {
		t.Fatalf("the refusals differ: %q", msgs)
	}
	select {
	case m := <-answer:
		if stopReason(m) != "end_turn" {
			t.Fatalf("A's turn ended %v", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("A's turn never ended")
	}
	waitExact(t, b, sid, fullSlowAnswer())
}
