package acpserver

import (
	"fmt"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// CodeBuddy's codeMode option (docs/codemode.md): its id; its _meta keys
// are in codebuddy.go.
const (
	optCodeMode = "codeMode"
	// metaParentToolCall, on a tool_call's _meta, names the call it runs
	// under: a codeMode script's (agent.ToolCall.ParentID).
	metaParentToolCall = "corvid.dev/parentToolCallId"
)

// codeModeOption is the codeMode select exactly as CodeBuddy hosts look for
// it (seed requirement C80).
func codeModeOption(c agent.Controls) acp.SessionConfigOption {
	return acp.SessionConfigOption{
		ID: optCodeMode, Name: "Code Mode", Type: "select",
		Description:  "Tool-calling mode for this session. Locked after the first agent reply.",
		Category:     categoryCodeMode,
		CurrentValue: orDefault(c.CodeMode, agent.CodeModeOff),
		Options: []acp.ConfigSelectValue{
			{Value: agent.CodeModeOff, Name: "Standard"},
			{Value: agent.CodeModeAll, Name: "PTC (All tools)"},
		},
	}
}

// initialCodeMode reads session/new's _meta[metaCodeMode]:
// "all", or "off" (the same as leaving it out); anything else is refused.
func initialCodeMode(meta acp.Meta) (string, error) {
	raw, ok := meta[metaCodeMode]
	if !ok || raw == nil {
		return agent.CodeModeOff, nil
	}
	v, isString := raw.(string)
	if !isString || !agent.ValidCodeMode(v) {
		return "", acp.InvalidParams("Invalid codeMode", fmt.Sprintf("_meta[%q] must be \"off\" or \"all\"; got %v", metaCodeMode, quoteJSON(raw)))
	}
	return v, nil
}

func quoteJSON(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// advertiseCodeMode adds the codeModeSupport flag to the capabilities' _meta.
func advertiseCodeMode(caps *acp.AgentCapabilities) {
	if caps.Meta == nil {
		caps.Meta = acp.Meta{}
	}
	caps.Meta[metaCodeModeSupport] = true
}
