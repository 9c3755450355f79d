// Package retype converts one stored event-log row of an earlier release to
// the typed form (store schema 3, issue #30): where a row carried its tags
// as a "meta" object of host _meta keys (CodeBuddy's codebuddy.ai/… and
// corvid.dev/…), it carries them as the agent's typed fields (agent.Tags:
// turnId, member, finalOutput, subagentUsage), and a team change or a drain
// turn's opener or closer, which were session_info_update rows, become rows
// of kinds of their own (team_update, drain_started, drain_ended).
//
// Row is a plain function over one row, so every store backend runs the
// same migration: internal/store (SQLite) calls it from migration 3 for
// every row; another backend calls it for each (kind, payload) it holds and
// writes back what it returns when changed is true. SessionConfig does the
// same for a session's stored settings (two codeMode keys). It imports nothing of
// corvid. The key names below are those earlier releases stored; they are
// frozen here and appear nowhere else in the store or the agent.
package retype

import (
	"bytes"
	"encoding/json"
)

// The _meta keys of the stored rows of schema 2 and before.
const (
	oldTurnID          = "codebuddy.ai/conversationRequestId"
	oldMemberEvent     = "codebuddy.ai/memberEvent"
	oldSubagent        = "corvid.dev/subagent"
	oldSubagentUsage   = "corvid.dev/subagentUsage"
	oldFinalOutput     = "corvid.dev/finalOutput"
	oldTeamUpdate      = "codebuddy.ai/teamUpdate"
	oldUnsolicitedTurn = "codebuddy.ai/unsolicitedTurn"
	oldSessionEnd      = "codebuddy.ai/sessionEnd"
	oldRequestID       = "codebuddy.ai/requestId"
)

// The kinds of the typed rows that replace session_info_update rows.
const (
	KindTeam         = "team_update"
	KindDrainStarted = "drain_started"
	KindDrainEnded   = "drain_ended"
)

// The typed fields, in the order the agent writes them (agent.Tags).
type member struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	ParentToolCallID string `json:"parentToolCallId"`
	Depth            int    `json:"depth"`
	Background       bool   `json:"background,omitempty"`
}

type finalOutput struct {
	Format string `json:"format"`
}

type tokenTotals struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

type drain struct {
	RequestID  string `json:"requestId"`
	Reason     string `json:"reason,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	Error      string `json:"error,omitempty"`
}

type tags struct {
	TurnID        string          `json:"turnId,omitempty"`
	Member        *member         `json:"member,omitempty"`
	FinalOutput   *finalOutput    `json:"finalOutput,omitempty"`
	SubagentUsage *tokenTotals    `json:"subagentUsage,omitempty"`
	Team          json.RawMessage `json:"team,omitempty"`
	Drain         *drain          `json:"drain,omitempty"`
}

// Row returns the typed form of one stored row of kind kind. changed is
// false (and kind and payload are returned as they are) for a row that
// holds no "meta" object: every row written by schema 3, every model
// context record, and every display event without tags. A row whose meta
// cannot be read is returned unchanged too: a reader skips what it cannot
// decode, as it did before.
func Row(kind string, payload []byte) (newKind string, newPayload []byte, changed bool) {
	if !bytes.Contains(payload, []byte(`"meta"`)) {
		return kind, payload, false
	}
	start, end, meta, ok := metaField(payload)
	if !ok {
		return kind, payload, false
	}
	var t tags
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return kind, payload, false
	}
	_ = json.Unmarshal(m[oldTurnID], &t.TurnID)
	if raw, ok := m[oldSubagent]; ok {
		var mem member
		if json.Unmarshal(raw, &mem) == nil {
			t.Member = &mem
		}
	} else if raw, ok := m[oldMemberEvent]; ok {
		var mem member
		if json.Unmarshal(raw, &mem.Name) == nil {
			t.Member = &mem
		}
	}
	if raw, ok := m[oldFinalOutput]; ok {
		var fo finalOutput
		if json.Unmarshal(raw, &fo) == nil {
			t.FinalOutput = &fo
		}
	}
	if raw, ok := m[oldSubagentUsage]; ok {
		var u tokenTotals
		if json.Unmarshal(raw, &u) == nil {
			t.SubagentUsage = &u
		}
	}
	switch {
	case kind == "session_info_update" && m[oldTeamUpdate] != nil:
		return whole(KindTeam, tags{Team: m[oldTeamUpdate]})
	case kind == "session_info_update" && m[oldUnsolicitedTurn] != nil:
		var d drain
		_ = json.Unmarshal(m[oldUnsolicitedTurn], &d)
		if d.RequestID == "" {
			_ = json.Unmarshal(m[oldRequestID], &d.RequestID)
		}
		return whole(KindDrainStarted, tags{Drain: &drain{RequestID: d.RequestID, Reason: d.Reason}})
	case kind == "session_info_update" && m[oldSessionEnd] != nil:
		var d drain
		_ = json.Unmarshal(m[oldSessionEnd], &d)
		if d.RequestID == "" {
			_ = json.Unmarshal(m[oldRequestID], &d.RequestID)
		}
		return whole(KindDrainEnded, tags{Drain: &drain{RequestID: d.RequestID, StopReason: d.StopReason, Error: d.Error}})
	}
	b, err := json.Marshal(t)
	if err != nil {
		return kind, payload, false
	}
	out := make([]byte, 0, len(payload))
	out = append(out, payload[:start]...)
	if len(b) > 2 { // not {}
		out = append(out, ',')
		out = append(out, b[1:len(b)-1]...)
	}
	out = append(out, payload[end:]...)
	return kind, out, true
}

// whole is a row that is nothing but its kind and its tags.
func whole(kind string, t tags) (string, []byte, bool) {
	b, err := json.Marshal(t)
	if err != nil {
		return kind, nil, false
	}
	out := append([]byte(`{"kind":"`+kind+`"`), ',')
	return kind, append(out, b[1:]...), true
}

// metaField finds the top-level "meta" member of the object payload, which
// the agent wrote after its kind: payload[start:end] is `,"meta":{…}` (with
// its leading comma) and meta is the object.
func metaField(payload []byte) (start, end int, meta []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, 0, nil, false
	}
	for dec.More() {
		before := int(dec.InputOffset()) // just after the previous value
		tok, err := dec.Token()
		if err != nil {
			return 0, 0, nil, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0, 0, nil, false
		}
		if key != "meta" {
			continue
		}
		if before <= 1 || payload[before] != ',' {
			return 0, 0, nil, false // never written so (kind comes first)
		}
		return before, int(dec.InputOffset()), v, len(v) > 0 && v[0] == '{'
	}
	return 0, 0, nil, false
}

// The keys of a session's stored settings (the sessions table's config
// JSON) that earlier releases spelled in CodeBuddy's vocabulary, and
// their names from schema 3 on.
var configKeys = [][2]string{
	{"codebuddy.ai/codeMode", "codeMode"},
	{"codebuddy.ai/mainAgent", "mainAgent"},
}

// SessionConfig returns a session's stored settings with the keys earlier
// releases named after CodeBuddy renamed (changed false: config as it is).
// Like Row, every backend calls it once per session in migration 3.
func SessionConfig(config []byte) (out []byte, changed bool) {
	if !bytes.Contains(config, []byte(`"codebuddy.ai/`)) {
		return config, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(config, &m) != nil {
		return config, false
	}
	for _, k := range configKeys {
		if v, ok := m[k[0]]; ok {
			delete(m, k[0])
			m[k[1]] = v
			changed = true
		}
	}
	if !changed {
		return config, false
	}
	b, err := json.Marshal(m)
	if err != nil {
		return config, false
	}
	return b, true
}
