package agent

import (
	"slices"

	"github.com/corvid-agent/corvid/internal/llm"
)

// loop runs model → tools → model until a stop reason.
func (t *Turn) loop() (StopReason, error) {
	s := t.s
	cfg := &s.agent.cfg
	for req := 0; ; req++ {
		if req >= cfg.MaxTurnRequests {
			return StopMaxTurnRequests, nil
		}
		if err := t.storeFault(); err != nil {
			return "", err
		}
		if t.needsCompaction() {
			if err := t.compact("", false); err != nil {
				if t.ctx.Err() != nil {
					return StopCancelled, nil
				}
				cfg.Logger.Warn("automatic compaction failed", "session", s.ID, "err", err)
			}
		}
		rs := s.settings.view()
		resp, err := t.stream(rs.model, t.request(rs), rs.window)
		// Keep whatever was streamed, even on failure or cancel.
		if len(resp.parts) > 0 {
			s.conv.appendHistory(llm.Message{Role: llm.RoleAssistant, Parts: resp.parts})
		}
		if err != nil {
			if t.ctx.Err() != nil {
				t.closeDanglingToolUses(resp.calls, "cancelled by the user before it ran")
				return StopCancelled, nil
			}
			t.closeDanglingToolUses(resp.calls, "not run: the model response failed")
			return "", err
		}
		if len(resp.calls) == 0 {
			return stopOf(resp.stop), nil
		}
		results := t.runTools(resp.calls)
		s.conv.appendHistory(llm.Message{Role: llm.RoleUser, Parts: results})
		if t.ctx.Err() != nil {
			return StopCancelled, nil
		}
	}
}

// request is the next model request: the system prompt (with what the MCP
// servers ask for, and the plan-mode note), the whole context and the
// session's tools.
func (t *Turn) request(rs settingsView) llm.Request {
	s := t.s
	box := s.toolbox.view()
	system := box.system
	if ins := box.mcp.Instructions(); ins != "" {
		system += "\n\n" + ins
	}
	if rs.plan {
		system += planModeNote
	}
	return llm.Request{
		Model:          modelName(rs.model.Info()),
		System:         system,
		Messages:       s.conv.messages(),
		Tools:          s.offeredTools(box.tools, rs.plan),
		MaxTokens:      s.agent.cfg.MaxTokens,
		ThinkingBudget: rs.thinkingBudget,
		ContextWindow:  rs.tier,
	}
}

const planModeNote = "\n\nYou are in plan mode: the session is read-only. Investigate with read and search tools and answer with a plan; do not try to write files or run commands (such calls are refused). When the plan is complete, call exit_plan with it: the user approves it or asks you to keep planning."

// offered drops exit_plan from the tools outside plan mode.
func offered(specs []llm.ToolSpec, plan bool) []llm.ToolSpec {
	if plan {
		return specs
	}
	return slices.DeleteFunc(specs, func(s llm.ToolSpec) bool { return s.Name == exitPlanName })
}

// stopOf is the turn's stop reason for a response that asked for no tool.
func stopOf(s llm.StopReason) StopReason {
	switch s {
	case llm.StopMaxTokens:
		return StopMaxTokens
	case llm.StopRefusal:
		return StopRefusal
	}
	return StopEndTurn
}

// modelName is the provider's own id of the model (ModelInfo.ID is
// provider:model; requests carry the model part).
func modelName(info llm.ModelInfo) string {
	_, m := llm.ParseModelID(info.ID)
	return m
}
