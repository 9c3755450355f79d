package sdkclient

import (
	acp "github.com/coder/acp-go-sdk"
)

// Helpers that read a session's transcript: the updates the recorder kept, in order.

func chunkText(b acp.ContentBlock) string {
	if b.Text != nil {
		return b.Text.Text
	}
	return ""
}

// messageChunks returns the texts of the agent_message_chunk updates, in order.
func messageChunks(ns []acp.SessionNotification) []string {
	var out []string
	for _, n := range ns {
		if u := n.Update.AgentMessageChunk; u != nil {
			out = append(out, chunkText(u.Content))
		}
	}
	return out
}

// thoughtChunks returns the texts of the agent_thought_chunk updates, in order.
func thoughtChunks(ns []acp.SessionNotification) []string {
	var out []string
	for _, n := range ns {
		if u := n.Update.AgentThoughtChunk; u != nil {
			out = append(out, chunkText(u.Content))
		}
	}
	return out
}

// toolCall is what a transcript says about one tool call.
type toolCall struct {
	id        acp.ToolCallId
	kind      acp.ToolKind
	statuses  []acp.ToolCallStatus // in order: the tool_call's, then each update's that has one
	texts     []string             // text content of the updates
	announced bool                 // a tool_call came before any tool_call_update
}

func (tc *toolCall) last() acp.ToolCallStatus {
	if len(tc.statuses) == 0 {
		return ""
	}
	return tc.statuses[len(tc.statuses)-1]
}

// toolCalls folds tool_call and tool_call_update notifications by id, in first-seen order.
func toolCalls(ns []acp.SessionNotification) []*toolCall {
	var order []*toolCall
	byID := map[acp.ToolCallId]*toolCall{}
	get := func(id acp.ToolCallId) *toolCall {
		tc := byID[id]
		if tc == nil {
			tc = &toolCall{id: id}
			byID[id] = tc
			order = append(order, tc)
		}
		return tc
	}
	for _, n := range ns {
		switch {
		case n.Update.ToolCall != nil:
			u := n.Update.ToolCall
			tc := get(u.ToolCallId)
			tc.announced = len(tc.statuses) == 0 && len(tc.texts) == 0
			tc.kind = u.Kind
			if u.Status != "" {
				tc.statuses = append(tc.statuses, u.Status)
			}
		case n.Update.ToolCallUpdate != nil:
			u := n.Update.ToolCallUpdate
			tc := get(u.ToolCallId)
			if u.Status != nil {
				tc.statuses = append(tc.statuses, *u.Status)
			}
			for _, c := range u.Content {
				if c.Content != nil {
					tc.texts = append(tc.texts, chunkText(c.Content.Content))
				}
			}
		}
	}
	return order
}
