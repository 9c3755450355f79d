package openai

import (
	"bytes"
	"errors"
	"io"

	"github.com/corvid-agent/corvid/internal/llm/sse"
)

// readEvents calls each with the data of every event of an event-stream
// body until each returns false, the body ends or a read fails (that
// read's error is returned). It reads the stream as OpenAI's servers and
// their imitators write it, and as the official SDK read it: "data:
// [DONE]" ends the stream; lines that are not SSE fields (a proxy's
// banner, a stray JSON line) and events without a data field are skipped
// (an empty data field is not: it is a malformed event); an event the body
// ended inside, without its blank line, is dropped.
func readEvents(body io.Reader, each func(data []byte) bool) error {
	r := sse.NewReader(body)
	for {
		data, complete, err := r.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, sse.ErrNotSSE):
			continue
		case err != nil:
			return err
		case !complete:
			return nil
		case bytes.HasPrefix(data, []byte("[DONE]")):
			return nil
		}
		if !each(data) {
			return nil
		}
	}
}
