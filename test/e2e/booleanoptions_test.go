package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// The schema lets an agent include type "boolean" config options only for
// a client that advertises clientCapabilities.session.configOptions.boolean.
// corvid's one boolean option, multitask, is offered in session/new, load,
// resume, fork, set_config_option and config_option_update to such a client,
// and to no other: acpx, Zed and a bare client never see a type "boolean"
// entry. They still find multitask through agentCapabilities._meta and
// write it with session/set_multitask (CodeBuddy's path).
func TestBooleanOptionsOnlyForClientsThatAdvertiseThem(t *testing.T) {
	for _, c := range []struct {
		host testkit.Host
		want bool
	}{
		{testkit.BooleanOptions(), true},
		{testkit.Minimal(), false},
		{testkit.Zed(), false},
	} {
		t.Run(c.host.Name, func(t *testing.T) {
			st := newSharedHome(t, text("hello", 0))
			a := st.start(t, c.host)
			if init := a.Transcript(); !strings.Contains(init[len(init)-1].Text, `"codebuddy.ai/multitaskSupport":true`) {
				t.Errorf("initialize does not advertise multitask in agentCapabilities._meta: %s", init[len(init)-1].Text)
			}
			results := map[string]json.RawMessage{}
			results["session/new"] = a.MustCall(a.ctx, "session/new", map[string]any{"cwd": st.workspace, "mcpServers": []any{}}, nil)
			var created struct {
				SessionID string `json:"sessionId"`
			}
			_ = json.Unmarshal(results["session/new"], &created)
			sid := created.SessionID
			a.turn(t, sid, "hi", "end_turn")
			results["session/set_config_option"] = a.MustCall(a.ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "mode", "value": "edit"}, nil)
			var mt struct{ OK, On bool }
			a.MustCall(a.ctx, "session/set_multitask", map[string]any{"sessionId": sid, "enabled": true}, &mt)
			if !mt.OK || !mt.On {
				t.Errorf("session/set_multitask = %+v, want ok and on: CodeBuddy's path works for every client", mt)
			}
			results["session/fork"] = a.MustCall(a.ctx, "session/fork", map[string]any{"sessionId": sid, "cwd": st.workspace, "mcpServers": []any{}}, nil)
			a.roundTrip(t)
			for i, u := range testkit.OfKind(a.Updates(sid), "config_option_update") {
				results["config_option_update "+string(rune('0'+i))] = u.Raw
			}
			a.Close()
			b := st.start(t, c.host)
			results["session/load"] = b.MustCall(b.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": st.workspace, "mcpServers": []any{}}, nil)
			b.Close()
			d := st.start(t, c.host)
			results["session/resume"] = d.MustCall(d.ctx, "session/resume", map[string]any{"sessionId": sid, "cwd": st.workspace}, nil)
			if len(results) < 7 {
				t.Errorf("only %d results to check, want new, set_config_option, fork, load, resume and the updates", len(results))
			}
			for what, raw := range results {
				o, has := rawOption(t, raw, "multitask")
				if has != c.want {
					t.Errorf("%s: multitask offered = %v, want %v: %s", what, has, c.want, raw)
				}
				if has && o["type"] != "boolean" {
					t.Errorf("%s: multitask option %v", what, o)
				}
				if !c.want && strings.Contains(string(raw), `"type":"boolean"`) {
					t.Errorf("%s: a type \"boolean\" entry for a client that did not advertise them: %s", what, raw)
				}
			}
		})
	}
}
