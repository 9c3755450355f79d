package acpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/tool"
)

// maxTextBytes bounds any one content.text we emit, so no line nears the
// 1 MiB that Gas City drops.
const maxTextBytes = 64 << 10

// Emit turns an agent event into session/update notifications.
func (ss *session) Emit(ev agent.Event) {
	ready := ss.ready.Load()
	if !ready && (ev.Kind == agent.EventCommands || ev.Kind == agent.EventMode || ev.Kind == agent.EventConfig) {
		return // pushed with the response, or carried by it, anyway
	}
	if ev.Kind == agent.EventTurnEnded {
		// A prompted turn ended, on whichever connection prompted it.
		ss.flushLines()
		ss.sessionEnd(string(ev.Stop), ss.srv.turnMeta(agent.TurnTag{ID: ev.TurnID}))
		return
	}
	if (ev.Kind == agent.EventNotice && !ss.ShowsNotices()) ||
		((ev.Kind == agent.EventCompaction || ev.Kind == agent.EventCompactionChunk) && !ss.ShowsCompaction()) {
		return // the agent asks first (agent.LiveFrontEnd); never past a client that did not advertise them
	}
	if ev.Kind == agent.EventConfig {
		// A slash command changed an option: the whole set, as after a write.
		ss.notify(acp.ConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: ss.srv.configOptionsFor(ss.Controls())})
		return
	}
	var turn map[string]any
	if ready {
		// The running turn's id (turnid.go) for hosts that use turn ids; a
		// drain turn's requestId for every host (drain.go).
		// A detached worker's updates belong to no turn.
		if tag := ss.Session.TurnTag(); (ss.srv.tagsTurns() || tag.DrainID != "") && !ev.FromWorker() {
			turn = ss.turns.get(ss.srv, tag)
		}
	}
	ss.emit(ev, turn)
	if ev.Kind == agent.EventInfo || ev.Kind == agent.EventUsage {
		ss.srv.opts.Hub.changed() // a title, the cost
	}
	if ev.Kind == agent.EventDrainEnded {
		ss.drainEnded(ev.Drain, turn)
	}
}

// ReplayDone sends the replay written so far (agent.ReplayBuffer): live
// frames after it follow it.
func (ss *session) ReplayDone() {
	if ss.replayRun != nil {
		_ = ss.replayRun.Flush()
	}
}

// emit sends ev's updates with the turn meta turn.
func (ss *session) emit(ev agent.Event, turn map[string]any) {
	mirror := ss.srv.messagesHost.Load()
	switch {
	case !mirror || ev.Kind == agent.EventMessageChunk:
	case ev.Kind == agent.EventDrainEnded:
		ss.flushLines() // a drain turn's closer ends the turn (gascitylines.go)
	default:
		// Anything else its agent does (a thought, a tool call, a plan,
		// the response's usage) ends the message it was writing.
		ss.flushSource(sourceOf(ev.Member))
	}
	for _, u := range ss.srv.updatesFor(ev) {
		u = withTurnMeta(u, turn)
		if c, ok := u.(acp.ContentChunk); ok && mirror && ev.Kind == agent.EventMessageChunk && c.Content.Type == "text" {
			ss.mirrorChunk(c, sourceOf(ev.Member), ev.Stored)
			continue
		}
		if !mirror {
			u = withWireText(u, &ev)
		}
		_ = ss.srv.conn.NotifyIf("session/update", ss.srv.notification(ss.id, u), ev.Stored)
	}
	if ev.Kind == agent.EventMode {
		// The agent changed the mode itself (exit_plan): the mode is a
		// config option too.
		_ = ss.srv.conn.Notify("session/update", ss.srv.notification(ss.id, acp.ConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: ss.srv.configOptionsFor(ss.Controls())}))
	}
}

// withWireText gives a text chunk's update its text in the wire form the
// event log escaped it in for its row (agent.Event.TextWire), when the
// update holds the event's whole text: the frame copies it instead of
// escaping the text again (acp.WireTextChunk; the frame is the same).
func withWireText(u any, ev *agent.Event) any {
	c, ok := u.(acp.ContentChunk)
	if !ok || ev.TextWire == "" || c.Content.Type != "text" || c.Content.Text != ev.Content.Text {
		return u
	}
	return acp.WireTextChunk{Chunk: c, TextJSON: ev.TextWire}
}

// replay sends a replayed event's updates through run: the frames emit
// sends for it (a replayed event has no Stored to ask), with less work per
// text chunk, the bulk of a replay.
func (ss *session) replay(run *acp.Run, ev agent.Event, turn map[string]any) {
	switch ev.Kind {
	case agent.EventUserChunk, agent.EventMessageChunk, agent.EventThoughtChunk:
		b := ev.Content
		if b != nil && b.Type == agent.BlockText && (ev.Kind == agent.EventThoughtChunk || !ss.srv.messagesHost.Load()) && ev.FinalOutput == nil {
			meta := withMeta(turn, ss.srv.tagMeta(&ev))
			switch {
			case b.TextJSON != "":
				// The stored bytes, as json.Marshal writes the text, cut
				// where splitText cuts the text.
				if b.TextLen <= maxTextBytes {
					_ = run.TextChunkJSON(ss.id, string(ev.Kind), b.TextJSON, ev.MessageID, meta)
					return
				}
				for _, piece := range splitWire(b.TextJSON, b.TextLen, maxTextBytes) {
					_ = run.TextChunkJSON(ss.id, string(ev.Kind), piece, ev.MessageID, meta)
				}
				return
			case len(b.Text) <= maxTextBytes:
				_ = run.TextChunk(ss.id, string(ev.Kind), b.Text, ev.MessageID, meta)
				return
			}
		}
		ev.Content = b.Decoded()
	}
	for _, u := range ss.srv.updatesFor(ev) {
		_ = run.Notify("session/update", ss.srv.notification(ss.id, withTurnMeta(u, turn)))
	}
	if ev.Kind == agent.EventMode {
		_ = run.Notify("session/update", ss.srv.notification(ss.id, acp.ConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: ss.srv.configOptionsFor(ss.Controls())}))
	}
}

// updatesFor converts one agent event for this connection's dialect
// (dialect.go); a long text chunk becomes several.
func (s *Server) updatesFor(ev agent.Event) []any {
	meta := s.tagMeta(&ev)
	switch ev.Kind {
	case agent.EventUserChunk, agent.EventMessageChunk, agent.EventThoughtChunk:
		if ev.Content == nil {
			return nil
		}
		var out []any
		for _, b := range contentBlocks(labelFinalOutput(ev)) {
			out = append(out, acp.ContentChunk{SessionUpdate: string(ev.Kind), Content: b, MessageID: ev.MessageID, Meta: meta})
		}
		return out
	case agent.EventToolCall, agent.EventToolCallState:
		if ev.ToolCall == nil {
			return nil
		}
		u := toolCallUpdate(*ev.ToolCall)
		u.SessionUpdate = string(ev.Kind)
		u.Meta = withMeta(u.Meta, meta)
		return []any{u}
	case agent.EventPlan:
		entries := make([]acp.PlanEntry, 0, len(ev.Plan))
		for _, e := range ev.Plan {
			entries = append(entries, acp.PlanEntry{Content: e.Content, Priority: orDefault(e.Priority, "medium"), Status: orDefault(e.Status, "pending")})
		}
		return []any{acp.PlanUpdate{SessionUpdate: "plan", Entries: entries, Meta: meta}}
	case agent.EventUsage:
		if ev.Usage == nil {
			return nil
		}
		u := acp.UsageUpdate{SessionUpdate: "usage_update", Used: ev.Usage.Used, Size: ev.Usage.Size}
		if ev.Usage.CostUSD != nil {
			u.Cost = &acp.Cost{Amount: *ev.Usage.CostUSD, Currency: "USD"}
		}
		um := map[string]any{} // a plain map: UsageUpdate.Meta is an any
		if t := ev.Usage.Tokens; t != nil {
			// The split the schema has no field for: cache reads and
			// writes, in corvid's _meta.
			um["corvid"] = t
		}
		for k, v := range meta {
			um[k] = v
		}
		if len(um) > 0 {
			u.Meta = um
		}
		return []any{u}
	case agent.EventInfo:
		return []any{acp.SessionInfoUpdate{SessionUpdate: "session_info_update", Title: ev.Title, UpdatedAt: ev.UpdatedAt, Meta: meta}}
	case agent.EventTeam, agent.EventDrainStarted, agent.EventDrainEnded:
		// No ACP v1 update says these: a session_info_update carries them
		// in _meta, for a dialect that has words for them.
		if len(meta) == 0 {
			return nil
		}
		return []any{acp.SessionInfoUpdate{SessionUpdate: "session_info_update", Meta: meta}}
	case agent.EventMode:
		return []any{acp.CurrentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: ev.ModeID}}
	case agent.EventCommands:
		return []any{commandsUpdate(ev.Commands)}
	case agent.EventNotice, agent.EventCompaction, agent.EventCompactionChunk:
		return liveUpdates(ev, meta)
	}
	return nil
}

// labelFinalOutput is the block a message chunk shows: for the final
// output (Tags.FinalOutput), its text set apart from the streamed
// output with its format label, as Leviath's document has it:
// "\n\n--- final output (FORMAT) ---\n" and then the answer. Hosts that
// ignore _meta (Zed, Gas City) show the label too; the _meta stays. The
// event (and so the store) holds the answer alone: print mode labels it
// its own way.
func labelFinalOutput(ev agent.Event) agent.Block {
	b := *ev.Content
	fo := ev.FinalOutput
	if fo == nil || b.Type != agent.BlockText {
		return b
	}
	b.Text = "\n\n--- final output (" + fo.Format + ") ---\n" + b.Text
	return b
}

// liveUpdates converts a live event (never stored): a notice, a
// compaction's state or a piece of its summary.
func liveUpdates(ev agent.Event, meta acp.Meta) []any {
	switch {
	case ev.Kind == agent.EventNotice && ev.Notice != nil && ev.Notice.Title != "":
		n := ev.Notice
		return []any{acp.NoticeUpdate{SessionUpdate: "notice", Severity: string(n.Severity), Title: n.Title, Description: n.Description, Meta: meta}}
	case ev.Kind == agent.EventCompaction && ev.Compaction != nil:
		c := ev.Compaction
		return []any{acp.CompactionUpdate{SessionUpdate: "compaction_update", CompactionID: c.ID, Status: string(c.Status), Error: c.Error, Meta: meta}}
	case ev.Kind == agent.EventCompactionChunk && ev.Compaction != nil && ev.Content != nil:
		var out []any
		for _, b := range contentBlocks(*ev.Content) {
			out = append(out, acp.CompactionSummaryChunk{SessionUpdate: "compaction_summary_chunk", CompactionID: ev.Compaction.ID, Content: b, Meta: meta})
		}
		return out
	}
	return nil
}

// ShowsNotices makes the session an agent.LiveFrontEnd: `notice` updates
// go only to a client that advertised session.notices.
func (ss *session) ShowsNotices() bool { return ss.srv.clientCaps.Notices() }

// ShowsCompaction: compaction updates go only to a client that advertised
// session.compaction.
func (ss *session) ShowsCompaction() bool { return ss.srv.clientCaps.Compaction() }

// withMeta is base with over's keys added (over wins on a clash). When one
// is empty the other is returned as it is, shared, not copied: nobody
// changes an update's _meta once built, so tagging costs no allocation.
func withMeta(base, over map[string]any) acp.Meta {
	switch {
	case len(over) == 0:
		return base
	case len(base) == 0:
		return over
	}
	out := make(acp.Meta, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// contentBlocks converts a block, splitting long text at rune boundaries.
func contentBlocks(b agent.Block) []acp.ContentBlock {
	switch b.Type {
	case agent.BlockText:
		var out []acp.ContentBlock
		for _, piece := range splitText(b.Text, maxTextBytes) {
			out = append(out, acp.TextBlock(piece))
		}
		return out
	case agent.BlockImage, agent.BlockAudio:
		return []acp.ContentBlock{{Type: string(b.Type), Data: base64.StdEncoding.EncodeToString(b.Data), MimeType: b.MimeType, URI: b.URI}}
	case agent.BlockResourceLink:
		return []acp.ContentBlock{{Type: "resource_link", URI: b.URI, Name: orDefault(b.Name, b.URI), Title: b.Title, MimeType: b.MimeType}}
	case agent.BlockResource:
		r := &acp.EmbeddedResource{URI: b.URI, MimeType: b.MimeType}
		if b.Blob {
			blob := base64.StdEncoding.EncodeToString(b.Data)
			r.Blob = &blob
		} else {
			text := b.Text
			r.Text = &text
		}
		return []acp.ContentBlock{{Type: "resource", Resource: r}}
	}
	return nil
}

// splitText cuts s into pieces of at most n bytes on rune boundaries. An
// empty s yields one empty piece.
func splitText(s string, n int) []string {
	if len(s) <= n {
		return []string{s}
	}
	var out []string
	for len(s) > n {
		i := n
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// splitWire is splitText for a text in wire form (the contents of the
// JSON string json.Marshal writes for it; n is the text's length): the
// wire form of each piece splitText cuts.
func splitWire(esc string, n, max int) []string {
	if n <= max {
		return []string{esc}
	}
	var out []string
	for esc != "" {
		head, _ := agent.CutWire(esc, max)
		if head == "" { // max below one character's length
			head = esc
		}
		out = append(out, head)
		esc = esc[len(head):]
	}
	return out
}

// truncateText caps tool-call display text; the model gets the full result.
func truncateText(s string) string {
	if len(s) <= maxTextBytes {
		return s
	}
	cut := splitText(s, maxTextBytes-64)[0]
	return cut + "\n… (display truncated)"
}

func toolCallUpdate(tc agent.ToolCall) acp.ToolCallUpdate {
	u := acp.ToolCallUpdate{
		ToolCallID: tc.ID, Name: tc.Name, Title: tc.Title, Kind: string(tc.Kind), Status: string(tc.Status),
		RawInput: tc.RawInput, RawOutput: tc.RawOutput,
	}
	if tc.ParentID != "" {
		u.Meta = acp.Meta{metaParentToolCall: tc.ParentID}
	}
	if tc.AnsweredBy != nil {
		u.Meta = withMeta(u.Meta, acp.Meta{metaAnsweredBy: answeredBy(tc.AnsweredBy)})
	}
	for _, c := range tc.Content {
		switch c.Type {
		case tool.ContentText:
			b := acp.TextBlock(truncateText(c.Text))
			u.Content = append(u.Content, acp.ToolCallContent{Type: "content", Content: &b})
		case tool.ContentImage:
			b := acp.ContentBlock{Type: "image", Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MimeType}
			u.Content = append(u.Content, acp.ToolCallContent{Type: "content", Content: &b})
		case tool.ContentDiff:
			u.Content = append(u.Content, acp.ToolCallContent{Type: "diff", Path: c.Path, OldText: c.OldText, NewText: c.NewText})
		case tool.ContentTerminal:
			u.Content = append(u.Content, acp.ToolCallContent{Type: "terminal", TerminalID: c.TerminalID})
		}
	}
	for _, l := range tc.Locations {
		loc := acp.ToolCallLocation{Path: l.Path}
		if l.Line > 0 {
			line := l.Line
			loc.Line = &line
		}
		u.Locations = append(u.Locations, loc)
	}
	return u
}

// permissionOptions are the four choices; hosts pick by kind, so the ids
// are just the kinds. The "always allow" option's name says exactly what
// it remembers (agent.ToolCall.AlwaysLabel).
func permissionOptions(call agent.ToolCall) []acp.PermissionOption {
	always := call.AlwaysLabel
	if always == "" {
		always = "Always allow"
	}
	return []acp.PermissionOption{
		{OptionID: "allow_once", Name: "Allow once", Kind: "allow_once"},
		{OptionID: "allow_always", Name: always, Kind: "allow_always"},
		{OptionID: "reject_once", Name: "Reject", Kind: "reject_once"},
		{OptionID: "reject_always", Name: "Always reject", Kind: "reject_always"},
	}
}

// RequestPermission asks the client. Cancelled, an unknown option, an error
// or a vanished client all mean reject once; nothing here ever allows by
// itself. Under serve, every connection holding the session is asked, and
// corvid respond can answer; on a shared store (PostgreSQL) so can the
// clients of every other daemon holding it. The first answer wins
// (questions.go, across.go).
func (ss *session) RequestPermission(ctx context.Context, call agent.ToolCall) (agent.Answer, error) {
	if ss.shared() || ss.sharesAcross() {
		// serve, or a shared store: every client that can answer, here
		// and on the other daemons, and corvid respond (questions.go).
		return ss.routePermission(ctx, call), nil
	}
	srv := ss.srv
	if srv.cannotAnswer() || srv.keepsTurns() {
		// A host that sent no clientCapabilities at all, or prompts with
		// messages, cannot answer requests (Gas City): ask out of band.
		// So does a turn that outlived its client (serve): the question
		// is stored in the conversation and `corvid respond` answers it.
		return ss.askOutOfBand(ctx, call)
	}
	ans, err := ss.askClient(ctx, call)
	if err != nil {
		select {
		case <-srv.conn.Gone():
			// The client left: the question stays open until the session
			// closes (Close ends ctx), so a detached worker is stopped as
			// interrupted rather than going on with a refusal. Under
			// serve's OnDisconnect "continue" the turn goes on, and the
			// question goes out of band.
			if srv.keepsTurns() {
				return ss.askOutOfBand(ctx, call)
			}
			<-ctx.Done()
		default:
		}
		return agent.RejectOnce, nil
	}
	return ans, nil
}

// askClient sends session/request_permission to this connection's client
// and reads its answer; an error means it gave none.
func (ss *session) askClient(ctx context.Context, call agent.ToolCall) (agent.Answer, error) {
	u := toolCallUpdate(call)
	u.Meta = withMeta(u.Meta, ss.srv.tagMeta(&agent.Event{Tags: agent.Tags{Member: call.Member}})) // a sub-agent's question names the sub-agent
	var resp acp.RequestPermissionResponse
	if err := ss.srv.conn.Call(ctx, "session/request_permission", acp.RequestPermissionRequest{SessionID: ss.id, ToolCall: u, Options: permissionOptions(call)}, &resp); err != nil {
		return agent.RejectOnce, err
	}
	if resp.Outcome.Outcome != "selected" {
		return agent.RejectOnce, nil
	}
	switch resp.Outcome.OptionID {
	case "allow_once":
		return agent.AllowOnce, nil
	case "allow_always":
		return agent.AllowAlways, nil
	case "reject_once":
		return agent.RejectOnce, nil
	case "reject_always":
		return agent.RejectAlways, nil
	}
	return agent.RejectOnce, fmt.Errorf("session/request_permission: the client picked option %q, which was not offered", resp.Outcome.OptionID)
}
