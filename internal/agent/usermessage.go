package agent

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/tool"
)

// userMessage converts prompt blocks into the model's user message: text
// as is, images as images, resources and files they link to inline.
func (s *Session) userMessage(ctx context.Context, blocks []Block) llm.Message {
	msg := llm.Message{Role: llm.RoleUser}
	for _, b := range blocks {
		switch b.Type {
		case BlockText:
			msg.Parts = append(msg.Parts, llm.Text(b.Text))
		case BlockImage:
			msg.Parts = append(msg.Parts, llm.Part{Type: llm.PartImage, MimeType: b.MimeType, Data: b.Data})
		case BlockResource:
			if b.Blob {
				msg.Parts = append(msg.Parts, llm.Text(fmt.Sprintf("<resource uri=%q mimeType=%q>(binary, %d bytes)</resource>", b.URI, b.MimeType, len(b.Data))))
			} else {
				msg.Parts = append(msg.Parts, llm.Text(fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", b.URI, b.Text)))
			}
		case BlockResourceLink:
			msg.Parts = append(msg.Parts, llm.Text(s.resolveLink(ctx, b)))
		case BlockAudio:
			msg.Parts = append(msg.Parts, llm.Text(fmt.Sprintf("(audio attachment %s, %d bytes, not supported by this model)", b.MimeType, len(b.Data))))
		}
	}
	if len(msg.Parts) == 0 {
		msg.Parts = append(msg.Parts, llm.Text(""))
	}
	return msg
}

// maxLinkBytes bounds a file pulled into context by a resource link.
const maxLinkBytes = 256 << 10

func (s *Session) resolveLink(ctx context.Context, b Block) string {
	path, ok := filePath(b.URI)
	if !ok {
		return s.resolveMCPLink(ctx, b)
	}
	// A link to a FIFO or device is refused before anything opens it; a
	// large file is read only as far as the context takes.
	var text string
	var err error
	if st, statErr := os.Stat(path); statErr == nil && (!st.Mode().IsRegular() || st.Size() > maxLinkBytes) {
		var head []byte
		var size int64
		head, size, err = tool.ReadPrefix(path, maxLinkBytes)
		text = string(head)
		if err == nil && size > maxLinkBytes {
			text = strings.ToValidUTF8(text, "") + fmt.Sprintf("\n… (truncated: %d more bytes)", size-maxLinkBytes)
		}
	} else {
		text, err = s.env.FS.ReadTextFile(ctx, path)
		if len(text) > maxLinkBytes {
			text = text[:maxLinkBytes] + "\n… (truncated)"
		}
	}
	if err != nil {
		return fmt.Sprintf("<resource_link uri=%q name=%q error=%q/>", b.URI, b.Name, err.Error())
	}
	return fmt.Sprintf("<file path=%q>\n%s\n</file>", path, text)
}

// filePath extracts an absolute path from a file:// URI or a bare path.
func filePath(uri string) (string, bool) {
	if strings.HasPrefix(uri, "file://") {
		u, err := url.Parse(uri)
		if err != nil || u.Path == "" {
			return "", false
		}
		return filepath.Clean(u.Path), true
	}
	if filepath.IsAbs(uri) {
		return filepath.Clean(uri), true
	}
	return "", false
}

// shorten returns the first line of s, at most n runes.
func shorten(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
