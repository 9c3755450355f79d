package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

func checkPrompt(c *checkRun) {
	a, sid, t, ok := c.textTurn()
	if !ok {
		return
	}
	if stopReasons[t.stop] {
		c.pass("prompt.stop-reason", "stopReason %q", t.stop)
	} else {
		c.fail("prompt.stop-reason", "stopReason %q is not a v1 stop reason: %s", t.stop, short(t.resp.Result))
	}
	n := 0
	for _, m := range t.during {
		if s, _ := m.update(); s == sid {
			n++
		}
	}
	if late := lateContent(a.collect(c.ctx, 300*time.Millisecond), sid); len(late) > 0 {
		c.fail("prompt.updates-before-response", "%d content update(s) after the prompt response, e.g. %s", len(late), short(late[0].Raw))
	} else {
		c.pass("prompt.updates-before-response", "%d update(s) before the response, none after", n)
	}
}

// awaitFirstUpdate reads until the first content update of sid, or the response to id.
// It returns the response if that came first.
func awaitFirstUpdate(ctx context.Context, a *agent, sid string, id json.RawMessage) (*msg, error) {
	for {
		m, err := a.next(ctx)
		if err != nil {
			return nil, err
		}
		if m.isResponse() && idKey(m.ID) == idKey(id) {
			return m, nil
		}
		if s, kind := m.update(); s == sid && contentKinds[kind] {
			return nil, nil
		}
	}
}

func checkCancel(c *checkRun) {
	const id = "prompt.cancel"
	a, _, sid, ok := c.setup(c.reqs)
	if !ok {
		return
	}
	pid, _ := a.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{textBlock(c.promptText())}})
	ctx, cancel := c.step()
	early, err := awaitFirstUpdate(ctx, a, sid, pid)
	cancel()
	switch {
	case err != nil:
		c.fail(id, "no update and no response to the prompt: %v", err)
		return
	case early != nil && early.Error != nil && needsAuth(early.Error):
		c.skip(id, "the prompt needs credentials: %s", early.Error)
		return
	case early != nil:
		c.skip(id, "the turn ended before its first update, so it could not be cancelled mid-stream: %s", short(early.Raw))
		return
	}
	sent := time.Now()
	_ = a.notify("session/cancel", map[string]any{"sessionId": sid})
	ctx, cancel = c.step()
	t, err := func() (*turn, error) {
		defer cancel()
		resp, during, err := a.await(ctx, pid)
		if err != nil {
			return nil, err
		}
		return &turn{resp: resp, during: during}, nil
	}()
	if err != nil {
		c.fail(id, "no prompt response after session/cancel: %v", err)
		return
	}
	took := time.Since(sent).Round(time.Millisecond)
	if t.resp.Error != nil {
		c.fail(id, "a cancelled prompt must end with stopReason cancelled, not an error: %s", t.resp.Error)
		return
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(t.resp.Result, &r)
	if r.StopReason != "cancelled" {
		c.fail(id, "stopReason %q after session/cancel mid-stream, want cancelled", r.StopReason)
		return
	}
	if late := lateContent(a.collect(c.ctx, 500*time.Millisecond), sid); len(late) > 0 {
		c.fail(id, "%d content update(s) after the cancelled response, e.g. %s", len(late), short(late[0].Raw))
		return
	}
	c.pass(id, "cancelled %s after session/cancel; nothing after", took)
}

func checkCancelRace(c *checkRun) {
	const id = "prompt.cancel-race"
	a, _, sid, ok := c.setup(c.reqs)
	if !ok {
		return
	}
	var outcomes []string
	for i := range 6 {
		pid, _ := a.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{textBlock(c.promptText())}})
		ctx, cancel := c.step()
		switch {
		case i == 0: // right behind the prompt
		case i == 1: // as the first (of very few) chunks arrives
			if early, err := awaitFirstUpdate(ctx, a, sid, pid); err != nil || early != nil {
				cancel()
				if early != nil && early.Error != nil && needsAuth(early.Error) {
					c.skip(id, "the prompt needs credentials: %s", early.Error)
					return
				}
				if err != nil {
					c.fail(id, "round %d: %v", i, err)
					return
				}
				outcomes = append(outcomes, "ended-before-cancel")
				continue
			}
		default:
			time.Sleep(time.Duration(i-2) * 2 * time.Millisecond)
		}
		_ = a.notify("session/cancel", map[string]any{"sessionId": sid})
		resp, _, err := a.await(ctx, pid)
		cancel()
		if err != nil {
			c.fail(id, "round %d: the prompt never answered after a racing cancel: %v", i, err)
			return
		}
		if resp.Error != nil {
			if i == 0 && needsAuth(resp.Error) {
				c.skip(id, "the prompt needs credentials: %s", resp.Error)
				return
			}
			c.fail(id, "round %d: a racing cancel produced an error: %s", i, resp.Error)
			return
		}
		var r struct {
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal(resp.Result, &r)
		if r.StopReason != "cancelled" && r.StopReason != "end_turn" {
			c.fail(id, "round %d: stopReason %q, want cancelled or end_turn", i, r.StopReason)
			return
		}
		outcomes = append(outcomes, r.StopReason)
	}
	// The session must still work afterwards.
	t, err := c.prompt(a, sid, []any{textBlock(c.promptText())}, nil)
	switch {
	case err != nil:
		c.fail(id, "a prompt after the races: %v", err)
	case t.refused != nil:
		c.fail(id, "a prompt after the races was refused: %s", t.refused)
	case t.stop != "end_turn":
		c.fail(id, "a prompt after the races ended %q, want end_turn", t.stop)
	default:
		c.pass(id, "6 races ended %s; the next prompt ended end_turn", strings.Join(outcomes, ", "))
	}
}

func checkConcurrent(c *checkRun) {
	const id = "prompt.concurrent"
	a, _, sid, ok := c.setup(c.reqs)
	if !ok {
		return
	}
	first, _ := a.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{textBlock(c.promptText())}})
	ctx, cancel := c.step()
	early, err := awaitFirstUpdate(ctx, a, sid, first)
	cancel()
	switch {
	case err != nil:
		c.fail(id, "first prompt: %v", err)
		return
	case early != nil && early.Error != nil && needsAuth(early.Error):
		c.skip(id, "the prompt needs credentials: %s", early.Error)
		return
	case early != nil:
		c.skip(id, "the first turn ended before a second prompt could be sent: %s", short(early.Raw))
		return
	}
	second, _ := a.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{textBlock("A second prompt while the first runs.")}})
	var r1, r2 *msg
	var order []string
	for r1 == nil || r2 == nil {
		m, err := a.next(c.ctx)
		if err != nil {
			c.fail(id, "waiting for both prompt responses (first: %v, second: %v): %v", r1 != nil, r2 != nil, err)
			return
		}
		if !m.isResponse() {
			continue
		}
		switch idKey(m.ID) {
		case idKey(first):
			r1 = m
			order = append(order, "first")
		case idKey(second):
			r2 = m
			order = append(order, "second")
		}
	}
	stop := func(m *msg) string {
		var r struct {
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal(m.Result, &r)
		return r.StopReason
	}
	switch {
	case r1.Error != nil:
		c.fail(id, "the first prompt failed once a second arrived: %s", r1.Error)
	case stop(r1) == "cancelled":
		c.fail(id, "the second prompt silently cancelled the first (first ended cancelled; second: %s)", short(r2.Raw))
	case r2.Error != nil:
		c.pass(id, "second refused (%s); first ended %s", r2.Error, stop(r1))
	default:
		c.pass(id, "both ran: first ended %s, second %s; answered %s", stop(r1), stop(r2), strings.Join(order, " then "))
	}
}

// A 1×1 PNG and a 4-sample 8 kHz mono WAV: the smallest valid payloads.
const (
	png1x1  = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	wavTiny = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAAAAAAAAAA=="
)

func checkContent(c *checkRun) {
	a, info, sid, ok := c.setup(c.reqs)
	if !ok {
		return
	}
	pc := info.AgentCapabilities.PromptCapabilities
	cases := []struct {
		id         string
		advertised bool
		gate       string
		block      map[string]any
	}{
		{"content.resource-link", true, "", map[string]any{"type": "resource_link", "uri": "file://" + c.ws.cwd + "/input.txt", "name": "input.txt", "mimeType": "text/plain"}},
		{"content.image", pc.Image, "promptCapabilities.image", map[string]any{"type": "image", "mimeType": "image/png", "data": png1x1}},
		{"content.audio", pc.Audio, "promptCapabilities.audio", map[string]any{"type": "audio", "mimeType": "audio/wav", "data": wavTiny}},
		{"content.embedded-resource", pc.EmbeddedContext, "promptCapabilities.embeddedContext", map[string]any{"type": "resource",
			"resource": map[string]any{"uri": "file://" + c.ws.cwd + "/notes.md", "mimeType": "text/markdown", "text": "# Notes\nconformance\n"}}},
	}
	_ = writeFile(c.ws.cwd, "input.txt", "conformance input\n")
	for _, tc := range cases {
		if !tc.advertised {
			c.skip(tc.id, "%s not advertised", tc.gate)
			continue
		}
		t, err := c.prompt(a, sid, []any{textBlock("Acknowledge the attachment in one word."), tc.block}, nil)
		switch {
		case err != nil:
			c.fail(tc.id, "%v", err)
			return
		case t.refused != nil && needsAuth(t.refused):
			c.skipAll(c.reqs, "the prompt needs credentials: %s", t.refused)
			return
		case t.refused != nil:
			c.fail(tc.id, "refused: %s", t.refused)
		case !stopReasons[t.stop]:
			c.fail(tc.id, "stopReason %q", t.stop)
		default:
			c.pass(tc.id, "accepted; stopReason %s", t.stop)
		}
	}
}

func checkConfig(c *checkRun) {
	a, _, err := c.open()
	if err != nil {
		c.failAll(c.reqs, "%v%s", err, hint(a))
		return
	}
	sid, resp, err := c.newSession(a, nil)
	if err == errNeedsAuth {
		c.skipAll(c.reqs, "session/new needs credentials (-32000)")
		return
	}
	if err != nil {
		c.failAll(c.reqs, "%v", err)
		return
	}
	var res struct {
		Modes         json.RawMessage   `json:"modes"`
		ConfigOptions []json.RawMessage `json:"configOptions"`
	}
	_ = json.Unmarshal(resp.Result, &res)
	modesCheck(c, a, sid, res.Modes)
	optionsCheck(c, a, sid, res.ConfigOptions)
}

func modesCheck(c *checkRun, a *agent, sid string, raw json.RawMessage) {
	const id = "config.modes"
	if len(raw) == 0 || string(raw) == "null" {
		c.skip(id, "session/new returned no modes")
		return
	}
	sch, _ := loadSchema()
	if err := sch.validate("SessionModeState", raw); err != nil {
		c.fail(id, "%v", err)
		return
	}
	var st struct {
		Current   string `json:"currentModeId"`
		Available []struct {
			ID string `json:"id"`
		} `json:"availableModes"`
	}
	_ = json.Unmarshal(raw, &st)
	target, found := "", false
	for _, m := range st.Available {
		found = found || m.ID == st.Current
		if target == "" || (target == st.Current && m.ID != st.Current) {
			target = m.ID
		}
	}
	if !found {
		c.fail(id, "currentModeId %q is not among availableModes", st.Current)
		return
	}
	r, _, err := c.callStep(a, "session/set_mode", map[string]any{"sessionId": sid, "modeId": target})
	switch {
	case err != nil:
		c.fail(id, "session/set_mode %s: %v", target, err)
	case r.Error != nil:
		c.fail(id, "session/set_mode %s: error %s", target, r.Error)
	case !isObject(r.Result):
		c.fail(id, "session/set_mode result %s, want an object", short(r.Result))
	default:
		c.pass(id, "%d modes; set_mode %s → %s", len(st.Available), target, short(r.Result))
	}
}

type configOption struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	CurrentValue json.RawMessage `json:"currentValue"`
	Options      []struct {
		Value   *string `json:"value"`
		Options []struct {
			Value string `json:"value"`
		} `json:"options"` // a group
	} `json:"options"`
}

// values flattens a select option's values, groups included.
func (o configOption) values() []string {
	var out []string
	for _, e := range o.Options {
		if e.Value != nil {
			out = append(out, *e.Value)
		}
		for _, g := range e.Options {
			out = append(out, g.Value)
		}
	}
	return out
}

func optionsCheck(c *checkRun, a *agent, sid string, raws []json.RawMessage) {
	if len(raws) == 0 {
		c.skip("config.options", "session/new returned no configOptions")
		c.skip("config.unknown-option", "session/new returned no configOptions")
		return
	}
	sch, _ := loadSchema()
	var opts []configOption
	var problems []string
	for _, raw := range raws {
		var o configOption
		_ = json.Unmarshal(raw, &o)
		opts = append(opts, o)
		if err := sch.validate("SessionConfigOption", raw); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if o.Type == "select" {
			var cur string
			_ = json.Unmarshal(o.CurrentValue, &cur)
			if vals := o.values(); !contains(vals, cur) {
				problems = append(problems, fmt.Sprintf("option %s: currentValue %q is not among its values", o.ID, cur))
			}
		}
	}
	for _, o := range opts {
		if len(problems) > 0 {
			break
		}
		p := map[string]any{"sessionId": sid, "configId": o.ID}
		switch o.Type {
		case "select":
			vals := o.values()
			if len(vals) == 0 {
				problems = append(problems, "option "+o.ID+" has no values")
				continue
			}
			p["value"] = vals[0]
		case "boolean":
			p["type"], p["value"] = "boolean", o.CurrentValue
		default:
			continue
		}
		r, _, err := c.callStep(a, "session/set_config_option", p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("set %s: %v", o.ID, err))
			continue
		}
		if r.Error != nil {
			problems = append(problems, fmt.Sprintf("set %s=%v: error %s", o.ID, p["value"], r.Error))
			continue
		}
		var res struct {
			ConfigOptions []configOption `json:"configOptions"`
		}
		_ = json.Unmarshal(r.Result, &res)
		got := map[string]bool{}
		for _, n := range res.ConfigOptions {
			got[n.ID] = true
		}
		for _, want := range opts {
			if !got[want.ID] {
				problems = append(problems, fmt.Sprintf("set %s: the response lacks option %s (it must be the full set)", o.ID, want.ID))
				break
			}
		}
	}
	if len(problems) > 0 {
		c.fail("config.options", "%s", strings.Join(problems, "; "))
	} else {
		ids := []string{}
		for _, o := range opts {
			ids = append(ids, o.ID)
		}
		c.pass("config.options", "set each of %s to its first value", strings.Join(ids, ", "))
	}
	r, _, err := c.callStep(a, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "conformance-no-such-option", "value": "x"})
	switch {
	case err != nil:
		c.fail("config.unknown-option", "%v", err)
	case r.Error == nil:
		c.fail("config.unknown-option", "an unknown configId was accepted: %s", short(r.Result))
	default:
		c.pass("config.unknown-option", "error %s", r.Error)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
