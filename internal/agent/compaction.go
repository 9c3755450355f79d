package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/usererr"
)

// compactAt is the share of the context window that triggers compaction.
const compactAt = 0.85

// keepTurns is how many recent user turns compaction keeps verbatim.
const keepTurns = 2

// compact summarises the older part of the context with the model and keeps
// the recent turns verbatim. manual is true for /compact.
func (t *Turn) compact(focus string, manual bool) error {
	s := t.s
	history := s.conv.messages()
	model := s.settings.view().model
	cut := compactionCut(history)
	if cut <= 0 {
		if manual {
			t.say("Nothing to compact yet: the conversation is short.")
		}
		return nil
	}
	// Copies: appending the instruction to older must not overwrite recent.
	older := append([]llm.Message(nil), history[:cut]...)
	recent := append([]llm.Message(nil), history[cut:]...)
	instruction := "Summarise the conversation above so that it can continue from the summary alone: the user's goals, decisions made, files read or changed (with paths), commands run and their outcomes, the current state, and open tasks. Be concise and factual."
	if strings.TrimSpace(focus) != "" {
		instruction += " Focus on: " + focus
	}
	req := llm.Request{
		Model:     modelName(model.Info()),
		System:    "You write precise summaries of coding sessions.",
		Messages:  append(older, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text(instruction)}}),
		MaxTokens: s.agent.cfg.MaxTokens,
	}
	progress := t.compactionProgress()
	var summary strings.Builder
	var usage llm.Usage
	for ev, err := range model.Stream(t.modelContext(), req) {
		if err != nil {
			progress.end(err)
			return err
		}
		switch ev.Type {
		case llm.EventTextDelta:
			summary.WriteString(ev.Text)
			progress.chunk(ev.Text)
		case llm.EventUsage:
			usage = ev.Usage
		}
	}
	text := strings.TrimSpace(summary.String())
	if text == "" {
		err := usererr.New("Compaction produced an empty summary; the conversation was left as it was.", "")
		progress.end(err)
		return err
	}
	fresh := []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("Summary of our conversation so far (older messages were compacted):\n\n" + text)}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("Understood; I will continue from this summary.")}},
	}
	fresh = append(fresh, recent...)
	s.conv.resetHistory(func([]llm.Message) []llm.Message { return fresh })
	progress.end(nil)
	how := "Compacted the conversation"
	if !manual {
		how = "The context was nearly full, so I compacted the conversation"
	}
	t.say(fmt.Sprintf("%s: %d earlier messages are now a summary; the last %d turns are kept as they were.", how, len(older), keepTurns))
	window := s.settings.view().window
	used := estimateTokens(fresh) + int64(len(text)/4)
	if usage.OutputTokens > 0 {
		used = estimateTokens(recent) + usage.OutputTokens
	}
	s.conv.setUsed(used)
	s.conv.emit(Event{Kind: EventUsage, Usage: &Usage{Used: used, Size: window}})
	return nil
}

// compactionProgress tells a front end that shows compactions
// (LiveFrontEnd) that one started; its chunk and end tell the rest. For
// other front ends it does nothing: they get the message compact says.
func (t *Turn) compactionProgress() *compactionProgress {
	s := t.s
	if !s.showsCompaction() {
		return &compactionProgress{}
	}
	p := &compactionProgress{front: s.front, id: NewID("cmp"), ctx: t.ctx}
	p.emit(EventCompaction, CompactionInProgress, "", nil)
	return p
}

// compactionProgress is one compaction's live updates; the zero value
// sends nothing.
type compactionProgress struct {
	front FrontEnd
	id    string
	ctx   context.Context
}

func (p *compactionProgress) emit(kind EventKind, status CompactionStatus, why string, content *Block) {
	if p.front == nil {
		return
	}
	p.front.Emit(Event{Kind: kind, Compaction: &Compaction{ID: p.id, Status: status, Error: why}, Content: content})
}

// chunk appends text to the summary the user sees.
func (p *compactionProgress) chunk(text string) {
	if text != "" {
		p.emit(EventCompactionChunk, "", "", &Block{Type: BlockText, Text: text})
	}
}

// end says how the compaction ended: completed (nil), cancelled (the
// turn's context ended) or failed, with what the user may read of err.
func (p *compactionProgress) end(err error) {
	switch {
	case err == nil:
		p.emit(EventCompaction, CompactionCompleted, "", nil)
	case p.ctx != nil && p.ctx.Err() != nil:
		p.emit(EventCompaction, CompactionCancelled, "", nil)
	default:
		why := "The model request for the summary failed."
		if ue, ok := usererr.Of(err); ok {
			why = ue.Message
		}
		p.emit(EventCompaction, CompactionFailed, why, nil)
	}
}

// compactionCut is the index of the first message kept verbatim: the start
// of the keepTurns-th last user prompt (tool results do not count).
func compactionCut(h []llm.Message) int {
	n := 0
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == llm.RoleUser && !isToolResults(h[i]) {
			n++
			if n == keepTurns {
				return i
			}
		}
	}
	return 0
}

func isToolResults(m llm.Message) bool {
	for _, p := range m.Parts {
		if p.Type != llm.PartToolResult {
			return false
		}
	}
	return len(m.Parts) > 0
}

func estimateTokens(msgs []llm.Message) int64 {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			n += len(p.Text) + len(p.Input) + len(p.Data)/3
		}
	}
	return int64(n / 4)
}

// needsCompaction reports whether the context is over the threshold.
func (t *Turn) needsCompaction() bool {
	w := t.s.settings.view().window
	return w > 0 && t.s.conv.used() >= int64(float64(w)*compactAt)
}
