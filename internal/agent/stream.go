package agent

import (
	"encoding/json"
	"slices"

	"github.com/corvid-agent/corvid/internal/llm"
)

// response is what one model call gave: its parts for the context, the
// tool calls among them and why it stopped.
type response struct {
	parts []llm.Part
	calls []llm.Part // the tool_use parts
	stop  llm.StopReason
}

// stream runs one model call, emitting chunks as they arrive.
func (t *Turn) stream(model llm.Model, r llm.Request, window int64) (response, error) {
	s := t.s
	a := assembler{msgID: NewID("msg"), thoughtID: NewID("thought"), partAt: map[int]int{}, toolSig: map[int]string{}, inTool: map[int]bool{}}
	var streamErr error
	for ev, err := range model.Stream(t.modelContext(), r) {
		if err == nil && t.ctx.Err() != nil {
			err = t.ctx.Err()
		}
		if err == nil {
			err = t.storeFault()
		}
		if err != nil {
			streamErr = err
			break
		}
		if out, ok := a.add(ev); ok {
			s.conv.emit(out)
		}
	}
	a.flush()
	if a.gotUsage {
		s.conv.emit(Event{Kind: EventUsage, Usage: t.meter(model.Info(), a.usage, window)})
	}
	if streamErr == nil {
		// No tool of this response runs once a commit of the turn failed
		// (the first emitted event committed its row, and the turn's lease,
		// before emit returned).
		streamErr = t.storeFault()
	}
	return a.resp, streamErr
}

// meter updates the context meter and the cost with a response's usage and
// returns the reading to show.
func (t *Turn) meter(info llm.ModelInfo, usage llm.Usage, window int64) *Usage {
	// used is what the context holds now (this response's input plus its
	// output), not a running sum; cost is the session's total.
	used := usage.InputTokens + usage.CacheReadTokens + usage.CacheWriteTokens + usage.OutputTokens
	tokens := usage
	u := &Usage{Used: used, Size: window, Tokens: &tokens}
	t.s.conv.setUsed(used)
	t.s.conv.addTokens(usage)
	if usd, ok := costOf(info, usage); ok {
		total := t.s.conv.addCost(usd)
		u.CostUSD = &total
	}
	return u
}

// assembler turns a model's stream events into the response's parts and
// the chunks to show.
type assembler struct {
	msgID, thoughtID string
	resp             response
	blk              block
	usage            llm.Usage
	gotUsage         bool
	// Where the signature of a block that is already closed goes: the part
	// made of the block, by the stream's index, and the signatures of tool
	// calls not yet ended.
	partAt  map[int]int
	toolSig map[int]string
	inTool  map[int]bool
}

// add takes one stream event; ok says out is a chunk to show.
func (a *assembler) add(ev llm.Event) (out Event, ok bool) {
	switch ev.Type {
	case llm.EventTextDelta:
		a.open(llm.PartText, ev.Index)
		a.blk.text.WriteString(ev.Text)
		return Event{Kind: EventMessageChunk, MessageID: a.msgID, Content: &Block{Type: BlockText, Text: ev.Text}}, ev.Text != ""
	case llm.EventThinkingDelta:
		a.open(llm.PartThinking, ev.Index)
		a.blk.text.WriteString(ev.Text)
		return Event{Kind: EventThoughtChunk, MessageID: a.thoughtID, Content: &Block{Type: BlockText, Text: ev.Text}}, ev.Text != ""
	case llm.EventSignature:
		a.signature(ev)
	case llm.EventToolUseStart:
		a.flush()
		a.inTool[ev.Index] = true
	case llm.EventToolUseEnd:
		a.toolUse(ev)
	case llm.EventUsage:
		a.usage, a.gotUsage = ev.Usage, true
	case llm.EventStop:
		a.resp.stop = ev.StopReason
	}
	return Event{}, false
}

// flush closes the current block into a part.
func (a *assembler) flush() {
	if p, ok := a.blk.part(); ok {
		for _, i := range a.blk.indexes {
			a.partAt[i] = len(a.resp.parts)
		}
		a.resp.parts = append(a.resp.parts, p)
	}
	a.blk = block{}
}

// open makes the current block one of kind at index, closing the current
// one unless it continues: same kind and index, or (thinking only) an
// unsigned reasoning text continued under a new index.
func (a *assembler) open(kind llm.PartType, idx int) {
	switch {
	case a.blk.kind == "" && a.blk.has(idx):
		a.blk.kind = kind // a signature came first; its content follows
		return
	case a.blk.kind == kind && a.blk.has(idx):
		return
	case a.blk.kind == kind && kind == llm.PartThinking && a.blk.signature == "":
		a.blk.indexes = append(a.blk.indexes, idx)
		return
	}
	a.flush()
	a.blk = block{kind: kind, indexes: []int{idx}}
}

// signature attaches a signature to the block, tool call or part of its
// index; one that comes alone is a block of its own (e.g. a redacted
// thinking block).
func (a *assembler) signature(ev llm.Event) {
	switch i, done := a.partAt[ev.Index]; {
	case a.blk.has(ev.Index):
		a.blk.signature += ev.Text
	case a.inTool[ev.Index]:
		a.toolSig[ev.Index] += ev.Text
	case done:
		a.resp.parts[i].Signature += ev.Text
	default:
		// A new block: its kind is that of the content that follows under
		// this index, else thinking.
		a.flush()
		a.blk = block{indexes: []int{ev.Index}, signature: ev.Text}
	}
}

func (a *assembler) toolUse(ev llm.Event) {
	a.flush()
	input := ev.Input
	if len(input) == 0 || !json.Valid(input) {
		input = json.RawMessage("{}")
	}
	p := llm.Part{Type: llm.PartToolUse, ToolUseID: ev.ToolUseID, ToolName: ev.ToolName, Input: input, Signature: a.toolSig[ev.Index]}
	delete(a.inTool, ev.Index)
	delete(a.toolSig, ev.Index)
	a.partAt[ev.Index] = len(a.resp.parts)
	a.resp.parts = append(a.resp.parts, p)
	a.resp.calls = append(a.resp.calls, p)
}

// block is the text or thinking block a stream is filling: its kind, the
// stream indexes it came under, its text and its signature.
type block struct {
	kind      llm.PartType // "" until known (or when there is no block)
	indexes   []int
	text      textBuf
	signature string
}

func (b *block) has(idx int) bool {
	return slices.Contains(b.indexes, idx)
}

// part is the block as a message part; an empty text without a signature
// is none, and a signature with no content is a thinking part (e.g. a
// redacted thinking block).
func (b *block) part() (llm.Part, bool) {
	if b.text.Len() == 0 && b.signature == "" {
		return llm.Part{}, false
	}
	kind := b.kind
	if kind == "" {
		kind = llm.PartThinking
	}
	return llm.Part{Type: kind, Text: b.text.take(), Signature: b.signature}, true
}
