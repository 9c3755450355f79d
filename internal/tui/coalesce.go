package tui

import (
	"bytes"
	"encoding/json"
)

// Streamed text is merged on its way to the UI: consecutive chunks of one
// message (same session, kind and messageId, plain text and nothing else)
// that arrive while the UI is busy become one update, so that the model
// renders, and the event loop carries, one update per frame rather than
// one per chunk. Order is kept: a chunk is merged only into the newest
// queued update, and anything else ends the run.

// textChunk is a chunk update that holds only text: the fields it may
// have, and none other (decoding it refuses unknown fields, so a chunk
// carrying more, such as _meta or annotations, is passed on as it came).
type textChunk struct {
	SessionUpdate string `json:"sessionUpdate"`
	MessageID     string `json:"messageId,omitempty"`
	Content       struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// mergeable decodes raw as a text chunk; ok is false for any other update.
func mergeable(raw json.RawMessage) (c textChunk, ok bool) {
	if !bytes.Contains(raw, []byte(`_chunk"`)) {
		return c, false // not a chunk: skip the decoding
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if d.Decode(&c) != nil || d.More() || c.Content.Type != "text" {
		return c, false
	}
	switch c.SessionUpdate {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		return c, true
	}
	return c, false
}

// merged is a run of text chunks of one message queued as one update.
type merged struct {
	chunk textChunk // the first chunk: its kind and messageId
	text  []byte    // the run's text
	n     int       // how many chunks
}

// join appends c to the run if it continues it.
func (r *merged) join(c textChunk) bool {
	if c.SessionUpdate != r.chunk.SessionUpdate || c.MessageID != r.chunk.MessageID {
		return false
	}
	r.text = append(r.text, c.Content.Text...)
	r.n++
	return true
}

// update is the run as one session/update.
func (r *merged) update() json.RawMessage {
	c := r.chunk
	c.Content.Text = string(r.text)
	b, _ := json.Marshal(c)
	return b
}
