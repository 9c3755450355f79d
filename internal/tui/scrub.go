package tui

import (
	"encoding/json"
	"errors"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/termsafe"
)

// What the agent sends is drawn on the user's terminal, and the agent
// says what its model wrote, what files hold and what commands print:
// text an untrusted repository can choose. So every string from the
// agent is scrubbed where it comes in (internal/termsafe: its controls
// shown as escapes, never obeyed): the params of its notifications and
// requests, the results and errors of the TUI's calls, and its stderr.
// The TUI's own styling is added after, so its escape sequences are the
// only ones the terminal gets (docs/security.md).

// scrubJSON is params or a result from the agent, scrubbed.
func scrubJSON(raw []byte) []byte { return termsafe.JSON(raw) }

// scrubText is text from the agent, scrubbed.
func scrubText(s string) string { return termsafe.String(s) }

// scrubError is err, from a call to the agent, with the message and data
// of a JSON-RPC error scrubbed.
func scrubError(err error) error {
	var e *acp.Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Message = scrubText(c.Message)
	if c.Data != nil {
		if raw, merr := json.Marshal(c.Data); merr == nil {
			var d any
			if json.Unmarshal(scrubJSON(raw), &d) == nil {
				c.Data = d
			}
		}
	}
	return &c
}
