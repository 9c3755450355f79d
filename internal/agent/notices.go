package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/usererr"
)

// notices holds what the user is told about a session's start (MCP servers
// that failed, ignored project settings) until the front end takes them.
type notices struct {
	mu      sync.Mutex
	pending []string
	taken   bool // the front end took the start notices
}

// add keeps text with the start notices; false when they were taken
// already (the caller tells the user another way).
func (n *notices) add(text ...string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.taken {
		return false
	}
	n.pending = append(n.pending, text...)
	return true
}

// take returns the start notices, once.
func (n *notices) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.pending
	n.pending, n.taken = nil, true
	return out
}

// Severity is how a Notice should be presented.
type Severity string

const (
	SeverityInfo    Severity = "info"
	SeverityWarning Severity = "warning"
	SeverityError   Severity = "error"
)

// Notice is live information for the user (EventNotice) that is not part of
// the conversation: a retried model request, an MCP server that restarted,
// a warning about the session's start.
type Notice struct {
	Severity    Severity
	Title       string // one line that stands alone
	Description string // optional detail
}

// CompactionStatus is where a compaction stands.
type CompactionStatus string

const (
	CompactionInProgress CompactionStatus = "in_progress"
	CompactionCompleted  CompactionStatus = "completed"
	CompactionFailed     CompactionStatus = "failed"
	CompactionCancelled  CompactionStatus = "cancelled"
)

// Compaction is the state of one compaction of the context (EventCompaction).
type Compaction struct {
	ID     string
	Status CompactionStatus
	Error  string // why it failed, for the user
}

// LiveFrontEnd is a front end that can show live events besides the
// conversation. A front end that is not one (print mode, a sub-agent's)
// gets notices as "[corvid] …" messages in the conversation, as before, and
// no compaction progress.
type LiveFrontEnd interface {
	ShowsNotices() bool    // EventNotice
	ShowsCompaction() bool // EventCompaction, EventCompactionChunk
}

func (s *Session) showsNotices() bool {
	l, ok := s.front.(LiveFrontEnd)
	return ok && l.ShowsNotices()
}

func (s *Session) showsCompaction() bool {
	l, ok := s.front.(LiveFrontEnd)
	return ok && l.ShowsCompaction()
}

// tell sends n as a live notice when the front end shows them, else as a
// message in the conversation, as corvid always did.
func (s *Session) tell(n Notice) {
	if s.showsNotices() {
		s.front.Emit(Event{Kind: EventNotice, Notice: &n})
		return
	}
	text := n.Title
	if n.Description != "" {
		text += ": " + n.Description
	}
	s.Notify("[corvid] " + text)
}

// modelContext is the turn's context for a model request: when the front
// end shows notices, each retry of the request (llm.WithRetry) is told to
// the user as one. Others are not told, as before.
func (t *Turn) modelContext() context.Context {
	s := t.s
	if !s.showsNotices() {
		return t.ctx
	}
	return llm.WithRetryObserver(t.ctx, func(r llm.Retry) {
		s.front.Emit(Event{Kind: EventNotice, Notice: &Notice{
			Severity:    SeverityWarning,
			Title:       fmt.Sprintf("The model request failed; retrying in %s (attempt %d of %d)", r.Delay.Round(100*time.Millisecond), r.Attempt+1, r.MaxAttempts),
			Description: retryCause(r.Err),
		}})
	})
}

// retryCause is what the user may read of a retried failure.
func retryCause(err error) string {
	if ue, ok := usererr.Of(err); ok {
		return ue.Message
	}
	return ""
}
