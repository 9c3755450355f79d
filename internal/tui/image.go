package tui

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/corvid-agent/corvid/internal/acp"
)

// sniffImage is the type of an image by its first bytes (PNG, JPEG, GIF,
// WebP: the types a prompt attaches), or "" when they are none of these.
// A name or a clipboard's target only claims a type: the bytes decide.
func sniffImage(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// imageBlock is the ACP image block for data, of the type its bytes say.
func imageBlock(data []byte, mime string) acp.ContentBlock {
	return acp.ContentBlock{Type: "image", MimeType: mime, Data: base64.StdEncoding.EncodeToString(data)}
}

var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = fmt.Errorf("over %d MB", maxImageBytes>>20)
	errNotImage   = errors.New("not an image (its bytes are not PNG, JPEG, GIF or WebP)")
)

// readImageFile reads an image file of at most maxImageBytes, and its
// type by its bytes. What it checks, it checks on the file it opened:
// opened without waiting (a FIFO put in the place of the file named
// cannot hold the UI), a regular file, and read no further than the
// limit (a file grown since its size was read is refused, not read).
func readImageFile(abs string) ([]byte, string, error) {
	f, err := openNoWait(abs)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, "", err
	case !st.Mode().IsRegular():
		return nil, "", errNotRegular
	case st.Size() > maxImageBytes:
		return nil, "", errTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, maxImageBytes+1))
	switch {
	case err != nil:
		return nil, "", err
	case len(data) > maxImageBytes:
		return nil, "", errTooLarge
	}
	mime := sniffImage(data)
	if mime == "" {
		return nil, "", errNotImage
	}
	return data, mime, nil
}

// imageFileNote says why the image file name is sent as its path.
func imageFileNote(name string, err error) string {
	switch {
	case errors.Is(err, errTooLarge):
		return fmt.Sprintf("%s is over %d MB: sent as its path, in the text", name, maxImageBytes>>20)
	case errors.Is(err, errNotImage), errors.Is(err, errNotRegular):
		return fmt.Sprintf("%s is %v: sent as its path, in the text", name, err)
	case errors.Is(err, os.ErrPermission):
		return fmt.Sprintf("%s cannot be read (permission denied): sent as its path, in the text", name)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Sprintf("%s cannot be read (%v): sent as its path, in the text", name, err)
}
