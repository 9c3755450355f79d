package config

import "testing"

func TestOptionAliasMapsKageValuesOntoCorvids(t *testing.T) {
	cases := []struct{ id, value, wantID, wantValue string }{
		// kage's thought levels, under kage's id and under corvid's.
		{"thinking", "default", "thought_level", "high"},
		{"thinking", "off", "thought_level", "off"},
		{"thinking", "minimal", "thought_level", "low"},
		{"thinking", "low", "thought_level", "low"},
		{"thinking", "medium", "thought_level", "medium"},
		{"thinking", "high", "thought_level", "high"},
		{"thinking", "xhigh", "thought_level", "max"},
		{"thought_level", "xhigh", "thought_level", "max"},
		{"thought_level", "minimal", "thought_level", "low"},
		// kage's modes.
		{"mode", "default", "mode", "default"},
		{"mode", "ask", "mode", "ask"},
		{"mode", "allow", "mode", "yolo"},
		{"mode", "deny", "mode", "deny"},
		// corvid's own values pass through.
		{"thought_level", "max", "thought_level", "max"},
		{"mode", "yolo", "mode", "yolo"},
		{"mode", "edit", "mode", "edit"},
		{"mode", "plan", "mode", "plan"},
		// Nothing is invented for other options or unknown values.
		{"model", "allow", "model", "allow"},
		{"mode", "bogus", "mode", "bogus"},
		{"context_window", "default", "context_window", "default"},
	}
	for _, c := range cases {
		id, v := OptionAlias(c.id, c.value)
		if id != c.wantID || v != c.wantValue {
			t.Errorf("OptionAlias(%q, %q) = %q, %q; want %q, %q", c.id, c.value, id, v, c.wantID, c.wantValue)
		}
	}
	if ModeAlias("allow") != "yolo" || ModeAlias("plan") != "plan" {
		t.Error("ModeAlias does not follow OptionAlias")
	}
}
