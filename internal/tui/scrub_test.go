package tui

import (
	"errors"
	"testing"

	"github.com/corvid-agent/corvid/internal/acp"
)

// A JSON-RPC error's message and data are scrubbed too.
func TestScrubErrorScrubsMessageAndData(t *testing.T) {
	err := scrubError(&acp.Error{Code: -32000, Message: "bad \x1b[2J", Data: map[string]any{"details": "x\x1b]0;t\x07"}})
	var e *acp.Error
	if !errors.As(err, &e) || e.Message != `bad \x1b[2J` || rpcMessage(err) != `bad \x1b[2J: x\x1b]0;t\x07` {
		t.Errorf("scrubError: %#v, rpcMessage %q", err, rpcMessage(err))
	}
}
