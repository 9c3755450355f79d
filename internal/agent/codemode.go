package agent

import (
	"github.com/corvid-agent/corvid/internal/llm"
)

// codeMode values (CodeBuddy's session option, docs/codemode.md): off calls
// every tool directly; all offers the model one tool, run_script, whose
// script calls the session's tools as functions.
const (
	CodeModeOff = "off"
	CodeModeAll = "all"
)

// Standing modes stored beside the codeMode marker (what CodeBuddy calls
// the session's main agent).
const (
	mainAgentCLI = "cli"
	mainAgentPTC = "ptc"
)

// ValidCodeMode reports whether v is a codeMode value ("mcp" and other
// legacy names are not).
func ValidCodeMode(v string) bool { return v == CodeModeOff || v == CodeModeAll }

// codeModeOrOff is the session's codeMode ("" until set: off).
func (s *settings) codeModeOrOff() string {
	if s.codeMode == "" {
		return CodeModeOff
	}
	return s.codeMode
}

// codeModeMarkers are the stored keys: nothing for a session that never set
// it, the value and the standing mode once set (an explicit off included).
func codeModeMarkers(v string) (codeMode, mainAgent string) {
	switch v {
	case CodeModeAll:
		return CodeModeAll, mainAgentPTC
	case CodeModeOff:
		return CodeModeOff, mainAgentCLI
	}
	return "", ""
}

// CodeMode is the session's codeMode (off or all).
func (s *Session) CodeMode() string {
	s.settings.mu.Lock()
	defer s.settings.mu.Unlock()
	return s.settings.codeModeOrOff()
}

// SetCodeMode writes the session's codeMode. The current value is always
// accepted (hosts replay it); a different one only while the session has
// no agent output yet: the tool-calling style is fixed for a session once
// the model has answered in it.
func (s *Session) SetCodeMode(v string) error {
	if !ValidCodeMode(v) {
		return invalidValue("codeMode %q is not one of off, all", v)
	}
	st := s.settings
	st.mu.Lock()
	current := st.codeModeOrOff()
	st.mu.Unlock()
	if v == current {
		return nil
	}
	if s.hasAgentOutput() {
		return invalidValue("codeMode locked: the session already has agent output, so it stays %q", current)
	}
	return st.commit(func(sv *savedSettings) error {
		sv.codeMode = v
		return nil
	})
}

// hasAgentOutput reports whether the model has answered in the session
// (live or in the stored history).
func (s *Session) hasAgentOutput() bool {
	for _, m := range s.conv.messages() {
		if m.Role == llm.RoleAssistant {
			return true
		}
	}
	return false
}
