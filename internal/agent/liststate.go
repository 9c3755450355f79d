package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/store"
)

// ListState is what a list of sessions shows of a stored session beyond
// its row: whether its last turn was interrupted, and its cost so far.
type ListState struct {
	// Interrupted: the last turn never ended. The process stopped (killed
	// mid-turn: a tool call never finished, or the model still owed the
	// answer to the prompt or to the tool results), or corvid serve's
	// drain interrupted it (its stored InterruptedTurnNote), or it was
	// cancelled before the model's answer began or during its tools. A
	// turn that ended with an error is not interrupted (it ended).
	Interrupted bool
	CostUSD     *float64 // the session's total, when the model's prices were known
}

// InterruptedTurnNote is how the note a turn cut short by the daemon's
// drain shows and stores begins (after blank lines); ListState
// recognises it.
const InterruptedTurnNote = "[corvid] This turn was interrupted"

// listStateEntry is a cached ListState, valid while the session's
// updated_at (bumped by every commit of its events) is at.
type listStateEntry struct {
	at    time.Time
	state ListState
}

// ListState reads a session's ListState from the store. updatedAt is the
// session row's updated_at as listed: while it is unchanged the answer is
// cached, so listing the same sessions again reads no events.
func (a *Agent) ListState(ctx context.Context, id string, updatedAt time.Time) (ListState, error) {
	if v, ok := a.listStates.Load(id); ok {
		if e := v.(listStateEntry); e.at.Equal(updatedAt) && !updatedAt.IsZero() {
			return e.state, nil
		}
	}
	st, err := a.openStore()
	if err != nil || st == nil {
		return ListState{}, err
	}
	ls, err := scanListState(ctx, st, id)
	if errors.Is(err, store.ErrNotFound) {
		a.listStates.Delete(id)
		return ListState{}, ErrSessionNotFound
	}
	if err != nil {
		return ListState{}, storeFailure("read", err)
	}
	a.listStates.Store(id, listStateEntry{at: updatedAt, state: ls})
	return ls, nil
}

// listRow is the part of a stored event a ListState reads: the fields it
// leaves out (a tool call's content and output, a message's text) are
// skipped by the decoder, not built.
type listRow struct {
	MessageID string `json:"messageId"`
	Content   *struct {
		Text string `json:"text"`
	} `json:"content"`
	ToolCall *struct {
		ID     string     `json:"id"`
		Status ToolStatus `json:"status"`
	} `json:"toolCall"`
	Usage *struct {
		CostUSD *float64 `json:"costUsd"`
	} `json:"usage"`
	// A detached worker's event: its member tag says background (typed
	// rows), or, in rows of releases before them, its _meta's
	// corvid.dev/subagent does.
	Member *struct {
		Background bool `json:"background"`
	} `json:"member"`
	Meta *struct {
		Subagent *struct {
			Background bool `json:"background"`
		} `json:"corvid.dev/subagent"`
	} `json:"meta"`
}

// fromWorker reports whether the row is a detached worker's, which belongs
// to no turn.
func (r *listRow) fromWorker() bool {
	return (r.Member != nil && r.Member.Background) || (r.Meta != nil && r.Meta.Subagent != nil && r.Meta.Subagent.Background)
}

// scanListState reads the end of the log, from its last prompt and its
// last usage reading, decoding only prompts, tool call states, usage
// readings and the rows that may hold the drain's note; a context
// record's role is found without decoding it.
func scanListState(ctx context.Context, st *store.Store, id string) (ListState, error) {
	sc := listScan{tools: map[string]ToolStatus{}}
	// From the last prompt and the last usage reading on: what came
	// before tells nothing of the last turn or the cost so far.
	tail := []string{string(EventUserChunk), string(EventUsage)}
	if err := st.ScanEventsTail(ctx, id, tail, sc.take); err != nil {
		return ListState{}, err
	}
	unfinished := false
	for _, s := range sc.tools {
		unfinished = unfinished || (s != ToolCompleted && s != ToolFailed)
	}
	sc.ls.Interrupted = sc.turn && !sc.ended && (sc.owed || unfinished || sc.noted)
	return sc.ls, nil
}

// listScan is what scanListState has read of a log's end so far.
type listScan struct {
	ls       ListState
	turn     bool   // a prompted turn was seen
	lastUser string // its prompt's message id
	owed     bool   // the last context record is the user's: the model owes an answer
	ended    bool   // a turn_error closed the turn
	noted    bool   // the drain's note was stored in the turn
	tools    map[string]ToolStatus
}

// take reads one row: the records by their kind alone, the events it
// needs decoded.
func (sc *listScan) take(r store.Event) error {
	switch r.Kind {
	case recordContext:
		sc.owed = roleAt(r.Payload, bytes.Index) == "user"
		return nil
	case recordContextReset:
		sc.owed = roleAt(r.Payload, bytes.LastIndex) == "user"
		return nil
	case recordTurnError:
		sc.ended = true
		return nil
	case string(EventUserChunk), string(EventToolCall), string(EventToolCallState), string(EventUsage):
	case string(EventMessageChunk):
		if !bytes.Contains(r.Payload, []byte(InterruptedTurnNote)) {
			return nil
		}
	default:
		return nil
	}
	var row listRow
	if json.Unmarshal(r.Payload, &row) != nil {
		return nil
	}
	sc.event(EventKind(r.Kind), &row)
	return nil
}

// event reads one decoded event row.
func (sc *listScan) event(kind EventKind, row *listRow) {
	switch kind {
	case EventUserChunk:
		if row.MessageID != sc.lastUser {
			sc.lastUser, sc.turn = row.MessageID, true
			sc.owed, sc.ended, sc.noted = false, false, false
			clear(sc.tools)
		}
	case EventMessageChunk:
		if row.Content != nil && strings.HasPrefix(strings.TrimSpace(row.Content.Text), InterruptedTurnNote) {
			sc.noted = true
		}
	case EventToolCall, EventToolCallState:
		if row.ToolCall == nil || row.fromWorker() {
			return // a detached worker's calls belong to no turn
		}
		s, seen := sc.tools[row.ToolCall.ID]
		if row.ToolCall.Status != "" || !seen {
			s = row.ToolCall.Status
		}
		sc.tools[row.ToolCall.ID] = s
	case EventUsage:
		if row.Usage != nil && row.Usage.CostUSD != nil {
			sc.ls.CostUSD = row.Usage.CostUSD
		}
	}
}

// roleAt is the role of a context record's message, found without
// decoding it: with bytes.Index the first "role" key (a context record is
// one llm.Message, its role first), with bytes.LastIndex the last (of a
// context_reset's list, the last message's, unless a tool input of that
// message has a "role" key of its own). Text never matches: its quotes
// are escaped.
func roleAt(payload []byte, index func(s, sep []byte) int) string {
	key := []byte(`"role":"`)
	i := index(payload, key)
	if i < 0 {
		return ""
	}
	rest := payload[i+len(key):]
	if j := bytes.IndexByte(rest, '"'); j >= 0 {
		return string(rest[:j])
	}
	return ""
}
