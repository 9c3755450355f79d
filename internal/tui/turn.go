package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/corvid-agent/corvid/internal/acp"
)

// startTurn sends a prompt's blocks (text is what the user wrote) on the
// open session.
func (m *model) startTurn(text string, blocks []acp.ContentBlock) tea.Cmd {
	m.gap = false
	m.running = true
	ag, id := m.ag, m.sessionID
	if m.connected() {
		m.shown.prompted(text) // known again in a re-attach's replay (transcript.go)
	}
	return func() tea.Msg {
		var resp acp.PromptResponse
		err := ag.call(context.Background(), "session/prompt",
			acp.PromptRequest{SessionID: id, Prompt: blocks}, &resp)
		return promptDoneMsg{stop: resp.StopReason, err: err, text: text, blocks: blocks, ag: ag, sessionID: id}
	}
}
