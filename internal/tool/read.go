package tool

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/llm"
)

//go:embed read.md
var readDescription string

const (
	// maxReadBytes caps what read returns to the model.
	maxReadBytes = 256 << 10
	// maxImageBytes is the largest image read passes to the model.
	maxImageBytes = 5 << 20
	// maxLineRunes cuts very long lines (minified code, data).
	maxLineRunes     = 2000
	defaultReadLimit = 2000
)

// Read reads a text file, or an image when the model accepts images.
type Read struct{}

type readInput struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

func (Read) Name() string        { return "read" }
func (Read) Description() string { return readDescription }
func (Read) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File path, absolute or relative to the working directory"},"offset":{"type":"integer","description":"First line (1-based)"},"limit":{"type":"integer","description":"Number of lines"}},"required":["path"]}`)
}

func (Read) Describe(env *Env, raw json.RawMessage) Preview {
	var in readInput
	looseDecode(raw, &in)
	p := env.Resolve(in.Path)
	title := "Read " + displayPath(env, p)
	if in.Offset > 0 || in.Limit > 0 {
		start := max(in.Offset, 1)
		if in.Limit > 0 {
			title += fmt.Sprintf(":%d-%d", start, start+in.Limit-1)
		} else {
			title += fmt.Sprintf(":%d", start)
		}
	}
	return Preview{Kind: KindRead, Title: title, Access: AccessRead, Paths: []string{p},
		Locations: []Location{{Path: p, Line: max(in.Offset, 0)}}}
}

func (Read) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in readInput
	if r := decodeInput("read", call.Input, &in); r != nil {
		return *r, nil
	}
	if in.Path == "" {
		return ErrorResult(`read needs a "path" string argument`), nil
	}
	if in.Offset < 0 || in.Limit < 0 {
		return ErrorResult("offset and limit must not be negative"), nil
	}
	p := env.Resolve(in.Path)
	st, err := os.Stat(p)
	if err == nil {
		if st.IsDir() {
			return ErrorResult(fmt.Sprintf("%s is a directory, not a file; use ls to list it", p)), nil
		}
		if !st.Mode().IsRegular() {
			return ErrorResult((&NotRegularError{Path: p, Mode: st.Mode()}).Error()), nil
		}
		if mime := imageType(p); mime != "" {
			return readImage(env, p, mime, st.Size())
		}
		if st.Size() > maxTextFile || readsDisk(env.fs()) {
			// Page through it on disk: memory and time follow the page,
			// not the file (and a file too large to send through an
			// editor never is).
			return readPage(ctx, p, in.Offset, in.Limit)
		}
	}
	text, err := env.fs().ReadTextFile(ctx, p)
	if err != nil {
		return fsFailure(ctx, "read", p, err)
	}
	if !isText([]byte(text[:min(len(text), binarySniff)])) {
		return ErrorResult(fmt.Sprintf("%s looks like a binary file; read only returns text", p)), nil
	}
	return formatPage(ctx, p, bufio.NewReaderSize(strings.NewReader(text), pageBuffer), in.Offset, in.Limit)
}

const (
	// binarySniff is how many leading bytes decide that a file is binary.
	binarySniff = 8192
	// pageBuffer is read's buffer for the lines of a page.
	pageBuffer = 64 << 10
	// countChunk is the read size for counting the lines after a page.
	countChunk = 256 << 10
)

// DiskReader is implemented by a file system that may serve ReadTextFile
// from the local disk; read then pages files on disk instead of loading
// them whole.
type DiskReader interface {
	ReadsDisk() bool
}

// readsDisk reports whether fsys reads the local disk: LocalFS itself (not
// a type wrapping it, whose ReadTextFile may do more) or a DiskReader that
// says so.
func readsDisk(fsys FS) bool {
	switch f := fsys.(type) {
	case LocalFS, *LocalFS:
		return true
	case DiskReader:
		return f.ReadsDisk()
	}
	return false
}

// readPage reads one page of a file on disk without loading it whole.
func readPage(ctx context.Context, p string, offset, limit int) (Result, error) {
	f, _, err := openRegular(p)
	if err != nil {
		return fsFailure(ctx, "read", p, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, pageBuffer)
	head, err := br.Peek(binarySniff)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return fsFailure(ctx, "read", p, err)
	}
	if !isText(head) {
		return ErrorResult(fmt.Sprintf("%s looks like a binary file; read only returns text", p)), nil
	}
	return formatPage(ctx, p, br, offset, limit)
}

// formatPage numbers the lines offset..offset+limit-1 of br (1-based; 0
// means from the start, the default page size), reading it as a stream:
// lines before the page are skipped without copying, lines after it only
// counted, so memory holds one page whatever the file's size.
func formatPage(ctx context.Context, p string, br *bufio.Reader, offset, limit int) (Result, error) {
	start := max(offset, 1)
	if limit <= 0 {
		limit = defaultReadLimit
	}
	var b strings.Builder
	lineNo, total, end := 0, 0, start-1
	cut := false
	if start > 1 {
		n, err := skipLines(ctx, br, start-1)
		if err != nil {
			return Result{}, err
		}
		lineNo, total = n, n
	}
	for {
		keep := 0
		if lineNo+1 >= start {
			keep = maxLineRunes * 4
		}
		line, err := readLine(br, keep)
		if line.n == 0 && err != nil {
			break
		}
		lineNo++
		total = lineNo
		if lineNo%(64<<10) == 0 && ctx.Err() != nil {
			return Result{}, ctx.Err() // skipping the lines of a huge file
		}
		if lineNo >= start {
			if b.Len() > maxReadBytes {
				fmt.Fprintf(&b, "… (output truncated before line %d; read on with offset %d)\n", lineNo, lineNo)
				cut = true
				break // no count of the rest is shown
			}
			text := strings.ToValidUTF8(strings.TrimRight(line.text, "\r\n"), "\uFFFD")
			if line.long || utf8.RuneCountInString(text) > maxLineRunes {
				text = shorten(text, maxLineRunes) + " (line truncated)"
			}
			b.WriteString(strconv.Itoa(lineNo))
			b.WriteByte('\t')
			b.WriteString(text)
			b.WriteByte('\n')
			end = lineNo
		}
		if err != nil {
			break
		}
		if lineNo == start+limit-1 {
			rest, err := countLines(ctx, br)
			if err != nil {
				return Result{}, err
			}
			total += rest
			break
		}
	}
	if total == 0 {
		return Result{Output: fmt.Sprintf("(%s is empty)", p), Locations: []Location{{Path: p}}}, nil
	}
	if start > total {
		return ErrorResult(fmt.Sprintf("offset %d is past the end of %s (%d lines)", start, p, total)), nil
	}
	if end < total && !cut {
		fmt.Fprintf(&b, "… (%d more lines; read on with offset %d)\n", total-end, end+1)
	}
	out := b.String()
	return Result{Output: out, Content: []Content{{Type: ContentText, Text: "```\n" + out + "```"}},
		Locations: []Location{{Path: p, Line: start}}}, nil
}

// skipLines discards the first k lines of br, a buffer at a time, and
// returns how many lines it passed: k, or fewer at the end of the input
// (a last line without a newline counts).
func skipLines(ctx context.Context, br *bufio.Reader, k int) (int, error) {
	skipped := 0
	for skipped < k {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if _, err := br.Peek(1); err != nil {
			return skipped, nil // the end (or a read error, which ends the file here)
		}
		b, _ := br.Peek(br.Buffered())
		if c := bytes.Count(b, newline); skipped+c < k {
			skipped += c
			br.Discard(len(b))
			if c == 0 || b[len(b)-1] != '\n' {
				// A line continues past this buffer: if the input ends
				// there, that unfinished line is one more.
				if _, err := br.Peek(1); err != nil {
					return skipped + 1, nil
				}
			}
			continue
		}
		pos := 0
		for skipped < k {
			pos += bytes.IndexByte(b[pos:], '\n') + 1
			skipped++
		}
		br.Discard(pos)
	}
	return skipped, nil
}

// countLines counts the lines left in br: its newlines, plus one for a
// last line without one. It reads in large chunks and stops on a cancel.
func countLines(ctx context.Context, br *bufio.Reader) (int, error) {
	buf := make([]byte, countChunk)
	n, last := 0, byte('\n')
	for {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		k, err := br.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], newline)
			last = buf[k-1]
		}
		if err != nil {
			break // io.EOF; a read error ends the count where it stands
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// pageLine is one line read by readLine: its text up to a cap, whether it
// was longer, and how many bytes it had (0 at the end of input).
type pageLine struct {
	text string
	long bool
	n    int
}

// readLine reads one line, keeping at most keep bytes of it.
func readLine(br *bufio.Reader, keep int) (pageLine, error) {
	var l pageLine
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		l.n += len(chunk)
		if room := keep - len(buf); room > 0 {
			buf = append(buf, chunk[:min(room, len(chunk))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		body := l.n
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			body--
		}
		l.long = body > len(buf)
		if len(buf) > 0 {
			l.text = string(buf)
		}
		return l, err
	}
}

func readImage(env *Env, p, mime string, size int64) (Result, error) {
	if !env.Images {
		return ErrorResult(fmt.Sprintf("%s is an image (%s) and this model does not accept images", p, mime)), nil
	}
	if size > maxImageBytes {
		return ErrorResult(fmt.Sprintf("%s is an image too large to pass on (%d MiB, limit %d MiB)", p, size>>20, maxImageBytes>>20)), nil
	}
	data, err := readRegular(p, maxImageBytes)
	if err != nil {
		return ErrorResult(fmt.Sprintf("cannot read %s: %v", p, err)), nil
	}
	if got := http.DetectContentType(data); got != mime {
		return ErrorResult(fmt.Sprintf("%s has an image extension but its content is %s", p, got)), nil
	}
	return Result{
		Output:    fmt.Sprintf("Image %s (%s, %d bytes).", p, mime, len(data)),
		Images:    []llm.Part{{Type: llm.PartImage, MimeType: mime, Data: data}},
		Content:   []Content{{Type: ContentImage, MimeType: mime, Data: data}},
		Locations: []Location{{Path: p}},
	}, nil
}

// imageType is the MIME type of an image file models commonly accept, by
// extension; "" for anything else.
func imageType(p string) string {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	}
	return ""
}

// isText reports whether a file's leading bytes look like text: no NUL
// byte (the test git and ripgrep use).
func isText(head []byte) bool {
	return bytes.IndexByte(head, 0) < 0
}

// displayPath shows p relative to the cwd when it lies inside it.
func displayPath(env *Env, p string) string {
	if rel, err := filepath.Rel(env.Cwd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return p
}
