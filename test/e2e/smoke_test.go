package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// The seed's smoke test: initialize (id 1, clientCapabilities {}) and session/new (id 2)
// are piped in and stdin closed at once; exactly two result lines come back, then exit 0.
// Any other line may only be a session/update notification (the command list corvid
// pushes after session/new; it skips that when the client has already gone).
func TestSeedSmokeTwoResultsThenCleanExitOnEOF(t *testing.T) {
	s := startCorvid(t, text("hi", 0), testkit.Options{})
	s.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	s.Send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + s.workspace + `","mcpServers":[]}}`)
	code, took := s.Close()
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if took > hangLimit {
		t.Errorf("exit took %v after EOF", took)
	}
	var got []string
	for _, l := range s.Transcript() {
		if l.Dir != testkit.FromAgent {
			continue
		}
		if strings.Contains(l.Text, `"method":"session/update"`) && !strings.Contains(l.Text, `"id":`) {
			continue
		}
		got = append(got, l.Text)
	}
	if len(got) != 2 {
		t.Fatalf("got %d lines, want exactly 2:\n%s", len(got), strings.Join(got, "\n"))
	}
	for i, want := range []string{`"id":1`, `"id":2`} {
		if !strings.Contains(got[i], want) || !strings.Contains(got[i], `"result"`) {
			t.Errorf("line %d = %s, want a result with %s", i+1, got[i], want)
		}
	}
	var res struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(got[1]), &res); res.Result.SessionID == "" {
		t.Errorf("session/new result has no sessionId: %s", got[1])
	}
}

func TestEveryHostPresetInitializes(t *testing.T) {
	for _, h := range []testkit.Host{testkit.Zed(), testkit.Emacs(), testkit.OldGasCity(), testkit.NewGasCity(), testkit.GoSDK(), testkit.Minimal()} {
		t.Run(h.Name, func(t *testing.T) {
			s := startCorvid(t, text("hi", 0), testkit.Options{IDs: h.IDs, NeverAnswer: h.Name == "gascity-old"})
			res, rerr := s.Initialize(s.ctx, h)
			if rerr != nil {
				t.Fatalf("initialize: %v", rerr)
			}
			if res.ProtocolVersion != 1 {
				t.Errorf("protocolVersion %d, want 1", res.ProtocolVersion)
			}
			if res.AgentInfo == nil || res.AgentInfo.Name != "corvid" {
				t.Errorf("agentInfo %+v", res.AgentInfo)
			}
			if id := s.NewSession(s.ctx, s.workspace); id == "" {
				t.Error("no session id")
			}
			if code, _ := s.Close(); code != 0 {
				t.Errorf("exit code %d", code)
			}
		})
	}
}

func TestProtocolVersionIsAlwaysOne(t *testing.T) {
	s := startCorvid(t, text("hi", 0), testkit.Options{})
	h := testkit.Minimal()
	h.Params["protocolVersion"] = 2
	res, rerr := s.Initialize(s.ctx, h)
	if rerr != nil || res.ProtocolVersion != 1 {
		t.Errorf("asked 2: got %d %v, want 1", res.ProtocolVersion, rerr)
	}
}
