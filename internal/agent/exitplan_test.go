package agent

import (
	"reflect"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
)

func TestExitPlanIsOfferedOnlyInPlanMode(t *testing.T) {
	specs := func() []llm.ToolSpec {
		return []llm.ToolSpec{{Name: "ask_user"}, {Name: exitPlanName}, {Name: "read"}}
	}
	if got := offered(specs(), true); len(got) != 3 {
		t.Errorf("plan mode offers %v", got)
	}
	for _, s := range offered(specs(), false) {
		if s.Name == exitPlanName {
			t.Error("exit_plan offered outside plan mode")
		}
	}
}

func TestPlanEntriesComeFromStepsOrListItems(t *testing.T) {
	contents := func(in exitPlanInput) []string {
		var out []string
		for _, e := range planEntries(in) {
			if e.Status != "pending" || e.Priority != "medium" {
				t.Errorf("entry %+v", e)
			}
			out = append(out, e.Content)
		}
		return out
	}
	for _, c := range []struct {
		in   exitPlanInput
		want []string
	}{
		{exitPlanInput{Plan: "x", Steps: []string{"a", " ", "b"}}, []string{"a", "b"}},
		{exitPlanInput{Plan: "# Plan\n\n1. Write a\n2) Test it\n- Ship\n* Tell\n2026 was a year"}, []string{"Write a", "Test it", "Ship", "Tell"}},
		{exitPlanInput{Plan: "Just do it.\nThen stop."}, []string{"Just do it."}},
	} {
		if got := contents(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %q, want %q", c.in.Plan, got, c.want)
		}
	}
}
