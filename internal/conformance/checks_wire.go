package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// checkStdio starts the agent, stays silent for a moment (output now breaks
// stdio.quiet-before-input, judged by the observer), does a little work, then
// closes stdin and times the exit.
func checkStdio(c *checkRun) {
	a, err := c.launch()
	if err != nil {
		c.fail("stdio.exit-on-eof", "%v", err)
		return
	}
	a.collect(c.ctx, 300*time.Millisecond)
	if _, _, err := c.callStep(a, "initialize", initParams(1)); err == nil {
		_, _, _ = c.callStep(a, "session/new", map[string]any{"cwd": c.ws.cwd, "mcpServers": []any{}})
	}
	start := time.Now()
	a.closeInput()
	select {
	case <-a.proc.Done():
		c.pass("stdio.exit-on-eof", "exited %s after stdin closed (%s)", time.Since(start).Round(time.Millisecond), a.exitState())
	case <-time.After(2 * time.Second):
		c.fail("stdio.exit-on-eof", "still running 2 s after stdin closed")
	case <-c.ctx.Done():
		c.fail("stdio.exit-on-eof", "still running when the check timed out")
	}
}

// probe sends an unknown-method request with the given raw id and returns its
// response and everything read before it.
func (c *checkRun) probe(a *agent, id string, method string) (*msg, []*msg, error) {
	ctx, cancel := c.step()
	defer cancel()
	if err := a.send(json.RawMessage(id), method, map[string]any{}); err != nil {
		return nil, nil, err
	}
	return a.await(ctx, json.RawMessage(id))
}

func sameID(m *msg, want string) bool {
	var got bytes.Buffer
	if json.Compact(&got, m.ID) != nil {
		return false
	}
	return got.String() == want
}

func checkEnvelope(c *checkRun) {
	a, err := c.launch()
	if err != nil {
		c.failAll(c.reqs, "%v", err)
		return
	}
	// id 0, then initialize proper.
	ctx, cancel := c.step()
	_ = a.send(json.RawMessage("0"), "initialize", initParams(1))
	resp, _, err := a.await(ctx, json.RawMessage("0"))
	cancel()
	if err != nil {
		c.failAll(c.reqs, "initialize (id 0): %v%s", err, a.stderrHint())
		return
	}
	idIntOK := sameID(resp, "0")
	idIntDetail := "ids 0 and 42 echoed"
	if !idIntOK {
		idIntDetail = "id 0 came back as " + string(resp.ID)
	}

	// Notifications: none may be answered.
	_ = a.notify("session/cancel", map[string]any{"sessionId": "conformance-no-such-session"})
	_ = a.notify("$/cancel_request", map[string]any{"requestId": 987654})
	_ = a.notify("conformance/unknown-notification", map[string]any{})
	p, before, err := c.probe(a, "42", "conformance/probe")
	if err != nil {
		c.failAll(c.reqs, "unknown method conformance/probe (id 42): %v%s", err, a.stderrHint())
		return
	}
	after := a.collect(c.ctx, 300*time.Millisecond)
	var answered []string
	for _, m := range append(before, after...) {
		if m.isReply() {
			answered = append(answered, short(m.Raw))
		}
	}
	if len(answered) > 0 {
		c.fail("envelope.no-response-to-notification", "notifications were answered: %s", strings.Join(answered, " | "))
	} else {
		c.pass("envelope.no-response-to-notification", "3 notifications, no response")
	}
	if !sameID(p, "42") {
		idIntOK, idIntDetail = false, "id 42 came back as "+string(p.ID)
	}
	if idIntOK {
		c.pass("envelope.id-int", "%s", idIntDetail)
	} else {
		c.fail("envelope.id-int", "%s", idIntDetail)
	}
	expectCode(c, "envelope.method-not-found", p, -32601, "conformance/probe")

	usable := []string{}
	probeAfter := func(what string, n int) bool {
		pr, _, err := c.probe(a, fmt.Sprint(1000+n), "conformance/probe")
		if err != nil {
			c.fail("envelope.usable-after-error", "no answer to a request after %s: %v%s", what, err, a.stderrHint())
			return false
		}
		_ = pr
		usable = append(usable, what)
		return true
	}

	checkIDEchoes(c, a)

	// Unknown extension request.
	if r, _, err := c.probe(a, "43", "_conformance/unknown"); err != nil {
		c.fail("envelope.ext-method-not-found", "no answer: %v", err)
	} else {
		expectCode(c, "envelope.ext-method-not-found", r, -32601, "_conformance/unknown")
	}

	if checkParseError(c, a) {
		usable = append(usable, "bad JSON")
	}
	if checkInvalidRequest(c, a) {
		usable = append(usable, "invalid request")
	}

	// Invalid params.
	r, _, err := c.callStep(a, "session/new", map[string]any{"cwd": 5, "mcpServers": []any{}})
	via := "session/new with cwd 5"
	if err == nil && r.Error != nil && r.Error.Code == -32000 {
		// Authentication is checked before params; try a method that needs none.
		r, _, err = c.callStep(a, "initialize", map[string]any{"protocolVersion": "one"})
		via = `initialize with protocolVersion "one" (session/new needs credentials)`
	}
	if err != nil {
		c.fail("envelope.invalid-params", "%s: %v", via, err)
	} else {
		expectCode(c, "envelope.invalid-params", r, -32602, via)
		probeAfter("invalid params", 3)
	}
	// The probes after the unknown method and the unknown extension request were answered.
	usable = append(usable, "unknown method", "unknown extension request")
	// A failure reported above stands; pass only records what was shown.
	c.pass("envelope.usable-after-error", "answered after: %s", strings.Join(usable, ", "))
}

// errorsUntilProbe sends a probe and returns the responses that arrived before
// its answer (the answers to the malformed line) and whether the probe was answered.
func errorsUntilProbe(c *checkRun, a *agent, n int) ([]*msg, bool) {
	pr, before, err := c.probe(a, fmt.Sprint(2000+n), "conformance/probe")
	var errs []*msg
	for _, m := range before {
		if m.isReply() {
			errs = append(errs, m)
		}
	}
	if err != nil {
		c.fail("envelope.usable-after-error", "no answer to a request after a malformed line: %v%s", err, a.stderrHint())
		return errs, false
	}
	_ = pr
	return errs, true
}

func expectCode(c *checkRun, id string, r *msg, code int, what string) {
	switch {
	case r.Error == nil:
		c.fail(id, "%s: want error %d, got result %s", what, code, short(r.Result))
	case r.Error.Code != code:
		c.fail(id, "%s: want error %d, got %s", what, code, r.Error)
	default:
		c.pass(id, "%s → %d", what, code)
	}
}

func checkNegotiation(c *checkRun) {
	const id = "initialize.version-negotiation"
	a, info, err := c.openWith(initParams(65535))
	if err != nil {
		c.fail(id, "initialize with protocolVersion 65535: %v%s", err, hint(a))
		return
	}
	var v int
	if json.Unmarshal(info.ProtocolVersion, &v) != nil || v < 1 || v > 65535 {
		c.fail(id, "protocolVersion %s is not a uint16 version", info.ProtocolVersion)
		return
	}
	if v == 65535 {
		c.fail(id, "asked for 65535, got 65535 back: the agent echoes the client's version instead of its own")
		return
	}
	c.pass(id, "asked for 65535, got %d", v)
}

// unstableCaps are capability names from schema.unstable.json: allowed at the root
// of their objects although the stable schema does not list them.
var unstableCaps = []string{"fork", "providers", "nes", "positionEncoding", "acp"}

func checkInitialize(c *checkRun) {
	a, info, err := c.open()
	if err != nil {
		c.failAll(c.reqs, "%v%s", err, hint(a))
		return
	}
	var v int
	if json.Unmarshal(info.ProtocolVersion, &v) == nil && v == 1 {
		c.pass("initialize.version-1", "asked for 1, got 1")
	} else {
		c.fail("initialize.version-1", "asked for 1, got %s", info.ProtocolVersion)
	}
	if info.AgentInfo != nil && info.AgentInfo.Name != "" && info.AgentInfo.Version != "" {
		c.pass("initialize.agent-info", "%s %s", info.AgentInfo.Name, info.AgentInfo.Version)
	} else {
		c.fail("initialize.agent-info", "agentInfo missing or incomplete")
	}

	sch, _ := loadSchema()
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(info.raw, &fields)
	caps := fields["agentCapabilities"]
	var problems []string
	if err := sch.validate("AgentCapabilities", caps); len(caps) > 0 && err != nil {
		problems = append(problems, err.Error())
	}
	problems = append(problems, customRootFields(caps, "AgentCapabilities")...)
	var capObj map[string]json.RawMessage
	_ = json.Unmarshal(caps, &capObj)
	for name, def := range map[string]string{"sessionCapabilities": "SessionCapabilities",
		"promptCapabilities": "PromptCapabilities", "mcpCapabilities": "McpCapabilities", "auth": "AgentAuthCapabilities"} {
		problems = append(problems, customRootFields(capObj[name], def)...)
	}
	if len(problems) > 0 {
		c.fail("initialize.capabilities", "%s", strings.Join(problems, "; "))
	} else {
		c.pass("initialize.capabilities", "%s", short(caps))
	}

	var methodProblems []string
	seen := map[string]bool{}
	for _, m := range info.AuthMethods {
		if err := sch.validate("AuthMethod", m); err != nil {
			methodProblems = append(methodProblems, err.Error())
		}
		var am struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		_ = json.Unmarshal(m, &am)
		if seen[am.ID] {
			methodProblems = append(methodProblems, "duplicate id "+am.ID)
		}
		seen[am.ID] = true
		if am.Type == "terminal" {
			methodProblems = append(methodProblems, "terminal method "+am.ID+" offered to a client without auth.terminal")
		}
	}
	if len(methodProblems) > 0 {
		c.fail("initialize.auth-methods", "%s", strings.Join(methodProblems, "; "))
	} else {
		c.pass("initialize.auth-methods", "%d method(s)", len(info.AuthMethods))
	}

	r, _, err := c.callStep(a, "authenticate", map[string]any{"methodId": "conformance-no-such-method"})
	switch {
	case err != nil:
		c.fail("initialize.authenticate-unknown", "authenticate: %v", err)
	case r.Error == nil:
		c.fail("initialize.authenticate-unknown", "authenticate with an unknown methodId succeeded: %s", short(r.Raw))
	default:
		c.pass("initialize.authenticate-unknown", "error %s", r.Error)
	}

	if v, ok := info.AgentCapabilities.Auth["logout"]; !ok || string(v) == "null" {
		c.skip("initialize.logout", "auth.logout not advertised")
		return
	}
	r, _, err = c.callStep(a, "logout", map[string]any{})
	switch {
	case err != nil:
		c.fail("initialize.logout", "logout: %v", err)
	case r.Error != nil:
		c.fail("initialize.logout", "logout: error %s", r.Error)
	case !isObject(r.Result):
		c.fail("initialize.logout", "logout result is %s, want an object", short(r.Result))
	default:
		c.pass("initialize.logout", "logout → %s", short(r.Result))
	}
}

// customRootFields lists keys of obj that the schema's def does not define
// (other than _meta and known unstable names): the spec forbids custom root fields.
func customRootFields(obj json.RawMessage, def string) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return nil
	}
	sch, err := acpkit.LoadSchema()
	if err != nil {
		return nil
	}
	var out []string
	for k := range m {
		if !sch.HasProperty(def, k) && k != "_meta" && !slices.Contains(unstableCaps, k) {
			out = append(out, fmt.Sprintf("custom root field %q in %s (custom data belongs in _meta)", k, def))
		}
	}
	slices.Sort(out)
	return out
}

func checkExtensibility(c *checkRun) {
	reqs := c.reqs
	meta := map[string]any{"conformance.corvid.dev/probe": true, "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	p := initParams(1)
	p["_meta"] = meta
	a, _, err := c.openWith(p)
	if err != nil {
		c.failAll(reqs, "initialize with _meta: %v%s", err, hint(a))
		return
	}
	accepted := []string{"initialize"}

	_ = a.notify("_conformance/notice", map[string]any{"note": "ignore me"})
	_ = a.notify("conformance/notice", map[string]any{})
	pr, before, err := c.probe(a, "77", "conformance/probe")
	after := a.collect(c.ctx, 200*time.Millisecond)
	var answered []string
	for _, m := range append(before, after...) {
		if m.isReply() {
			answered = append(answered, short(m.Raw))
		}
	}
	switch {
	case err != nil:
		c.fail("extensibility.unknown-notification", "no answer to a request after two unknown notifications: %v%s", err, a.stderrHint())
	case len(answered) > 0:
		c.fail("extensibility.unknown-notification", "unknown notifications were answered: %s", strings.Join(answered, " | "))
	default:
		_ = pr
		c.pass("extensibility.unknown-notification", "_conformance/notice and conformance/notice ignored; connection answers")
	}

	sid, _, err := c.newSession(a, map[string]any{"_meta": meta})
	if err != nil && err != errNeedsAuth {
		c.fail("extensibility.meta-accepted", "session/new with _meta: %v", err)
		return
	}
	if err == errNeedsAuth {
		c.pass("extensibility.meta-accepted", "accepted on initialize; session/new needs credentials, prompt not tried")
		return
	}
	accepted = append(accepted, "session/new")
	t, err := c.prompt(a, sid, []any{textBlock(c.promptText())}, meta)
	switch {
	case err != nil:
		c.fail("extensibility.meta-accepted", "session/prompt with _meta: %v", err)
	case t.refused != nil && needsAuth(t.refused):
		c.pass("extensibility.meta-accepted", "accepted on %s; prompt needs credentials", strings.Join(accepted, ", "))
	case t.refused != nil:
		c.fail("extensibility.meta-accepted", "session/prompt with _meta refused: %s", t.refused)
	default:
		accepted = append(accepted, "session/prompt")
		c.pass("extensibility.meta-accepted", "accepted on %s", strings.Join(accepted, ", "))
	}
}

// checkIDEchoes checks that a string id and an int64 id beyond float
// precision come back as sent.
func checkIDEchoes(c *checkRun, a *agent) {
	for _, tc := range []struct{ req, id string }{
		{"envelope.id-string", `"conf-é \"7\""`},
		{"envelope.id-int64", "9007199254740993"},
	} {
		if r, _, err := c.probe(a, tc.id, "conformance/probe"); err != nil {
			c.fail(tc.req, "no answer to id %s: %v", tc.id, err)
		} else if !sameID(r, tc.id) {
			c.fail(tc.req, "id %s came back as %s", tc.id, r.ID)
		} else {
			c.pass(tc.req, "id %s echoed", tc.id)
		}
	}
}

// checkParseError sends a line of bad JSON: the reply must be -32700 with
// id null. It says whether the agent answered a request after it.
func checkParseError(c *checkRun, a *agent) bool {
	_ = a.writeLine(`{"jsonrpc":"2.0","id":44,"method":"initialize","params":{`)
	errs, ok := errorsUntilProbe(c, a, 1)
	switch {
	case len(errs) == 0:
		c.fail("envelope.parse-error", "no response to a line of bad JSON")
	case errs[0].Error == nil || errs[0].Error.Code != -32700:
		c.fail("envelope.parse-error", "want error -32700, got %s", short(errs[0].Raw))
	case errs[0].ID == nil:
		c.fail("envelope.parse-error", "-32700 must carry \"id\": null; the id is missing")
	case idKey(errs[0].ID) != "null":
		c.fail("envelope.parse-error", "-32700 must carry id null, got id %s", errs[0].ID)
	default:
		c.pass("envelope.parse-error", "-32700 with id null")
	}
	return ok
}

// checkInvalidRequest sends a well-formed object that is not a valid
// request (method is a number): the reply must be -32600 with its id (or
// null). It says whether the agent answered a request after it.
func checkInvalidRequest(c *checkRun, a *agent) bool {
	_ = a.writeLine(`{"jsonrpc":"2.0","id":45,"method":17,"params":{}}`)
	errs, ok := errorsUntilProbe(c, a, 2)
	switch {
	case len(errs) == 0:
		c.fail("envelope.invalid-request", `no response to {"id":45,"method":17}`)
	case errs[0].Error == nil || errs[0].Error.Code != -32600:
		c.fail("envelope.invalid-request", "want error -32600, got %s", short(errs[0].Raw))
	case errs[0].ID == nil || (idKey(errs[0].ID) != "45" && idKey(errs[0].ID) != "null"):
		c.fail("envelope.invalid-request", "-32600 must carry id 45 (or null), got %s", errs[0].ID)
	default:
		c.pass("envelope.invalid-request", "-32600 with id %s", errs[0].ID)
	}
	return ok
}
