package acpserver

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// CodeBuddy's client turn id (docs/codebuddy.md): session/prompt may carry
// _meta[metaConversationRequestID] (codebuddy.go), a UUIDv7 as 32 lowercase hex
// digits without hyphens; corvid makes one when it is absent. The id is
// stored with the turn's prompt, echoed in the PromptResponse's _meta and
// in the _meta of every session/update of the turn, and sent to the model
// provider as the X-Conversation-Request-ID header. It is unrelated to a
// drain turn's request id (drain.go).
const headerConversationRequest = "X-Conversation-Request-ID"

// conversationRequestID returns the prompt's turn id, or a new one.
func conversationRequestID(meta acp.Meta) (string, error) {
	v, ok := meta[metaConversationRequestID]
	if !ok || v == nil {
		return newUUIDv7(time.Now()), nil
	}
	s, isString := v.(string)
	if !isString {
		return "", acp.InvalidParams("Invalid params", fmt.Sprintf("_meta[%q] must be a string: a UUIDv7 as 32 lowercase hexadecimal digits without hyphens", metaConversationRequestID))
	}
	if why := uuidv7Problem(s); why != "" {
		return "", acp.InvalidParams("Invalid params", fmt.Sprintf("_meta[%q] = %q %s; it must be a UUIDv7 as 32 lowercase hexadecimal digits without hyphens, e.g. 0198a1b2c3d47e5f8a9b0c1d2e3f4a5b", metaConversationRequestID, s, why))
	}
	return s, nil
}

// uuidv7Problem says what keeps s from being a hyphen-free lowercase UUIDv7
// ("" when nothing does).
func uuidv7Problem(s string) string {
	if len(s) != 32 {
		return fmt.Sprintf("has %d characters, not 32", len(s))
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Sprintf("has %q at position %d, which is not a lowercase hexadecimal digit", c, i)
		}
	}
	if s[12] != '7' {
		return fmt.Sprintf("has version %c, not 7", s[12])
	}
	switch s[16] {
	case '8', '9', 'a', 'b':
	default:
		return "does not have the RFC 9562 variant (its 17th digit must be 8, 9, a or b)"
	}
	return ""
}

// newUUIDv7 is an RFC 9562 UUIDv7 for time t: 48 bits of Unix milliseconds,
// then random bits, as 32 lowercase hex digits.
func newUUIDv7(t time.Time) string {
	var b [16]byte
	_, _ = rand.Read(b[6:])
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(t.UnixMilli()))
	copy(b[:6], ms[2:])
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	return hex.EncodeToString(b[:])
}

// withTurnMeta adds a turn's meta to one update's _meta (the update's own
// keys win). Commands lists belong to no turn.
func withTurnMeta(u any, turn map[string]any) any {
	if len(turn) == 0 {
		return u
	}
	switch v := u.(type) {
	case acp.ContentChunk:
		v.Meta = withMeta(turn, v.Meta)
		return v
	case acp.ToolCallUpdate:
		v.Meta = withMeta(turn, v.Meta)
		return v
	case acp.PlanUpdate:
		v.Meta = withMeta(turn, v.Meta)
		return v
	case acp.UsageUpdate:
		m, _ := v.Meta.(map[string]any)
		v.Meta = map[string]any(withMeta(turn, m))
		return v
	case acp.SessionInfoUpdate:
		v.Meta = withMeta(turn, v.Meta)
		return v
	case acp.CurrentModeUpdate:
		v.Meta = withMeta(turn, v.Meta)
		return v
	}
	return u
}

// replayTurnMeta follows a replayed log: a user chunk opens a turn whose
// stored id tags what follows, until the next prompt; a drain turn's
// opener tags what follows with its id, until its closer.
type replayTurnMeta struct {
	srv     *Server
	current map[string]any
}

func (r *replayTurnMeta) next(ev agent.Event) map[string]any {
	switch ev.Kind {
	case agent.EventUserChunk:
		r.current = r.srv.turnMeta(agent.TurnTag{ID: ev.TurnID})
		return nil // the chunk carries it already
	case agent.EventDrainStarted:
		if ev.Drain != nil {
			r.current = r.srv.turnMeta(agent.TurnTag{DrainID: ev.Drain.RequestID})
		}
	case agent.EventDrainEnded:
		cur := r.current
		r.current = nil
		return cur
	}
	return r.current
}

// tagsTurns reports whether updates carry their turn's id: for CodeBuddy
// hosts (C12), which either say so (--compat codebuddy) or send turn ids.
// Other clients get the id in the prompt's response only: tagging every
// streamed chunk costs them a quarter of the throughput for nothing.
func (s *Server) tagsTurns() bool { return s.codebuddy() || s.turnIDHost.Load() }
