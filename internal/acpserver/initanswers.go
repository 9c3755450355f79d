package acpserver

// The daemon's initialize answers, published for the relay (issue 30).
//
// An editor starts `corvid acp --connect unix:PATH`, a relay whose whole
// start-up is what the editor waits for (internal/fastrelay). Waiting for
// the daemon's answer to initialize costs the relay its round trip through
// a process that must be woken; instead the relay answers from a copy the
// daemon keeps at PATH.init, then forwards the request and checks the
// daemon's own answer against the one it gave. The copy holds one answer
// per variant: the answer depends on the request only through the
// declared dialect, whether the client watches the session list, and
// whether it takes terminal authentication (InitializeKey). Everything
// else it depends on is the daemon's: its options, which SIGHUP replaces
// for new connections, and its model, which authenticate may change. So
// before each answer it gives, the daemon compares it with the published
// one and publishes afresh when they differ: a relay that answered from
// the copy a moment before finds, when the daemon's answer arrives, the
// copy already updated, and its editor holds what a client that connected
// just before the change holds. A relay whose answer differs from the
// daemon's while the copy says the same had no right to answer, and ends
// (fastrelay says so on stderr).
//
// The file (encodeInitAnswers): a first line naming the format, an index
// of where each key's answer is, then the answers, each the result object
// as the protocol connection writes it (acp.InitializeResponse's
// MarshalJSON, one line). It is written to a temporary file and renamed,
// mode 0600, beside the socket.

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/corvid-agent/corvid/internal/acp"
)

// InitAnswersHeader is the first line of a published answers file.
const InitAnswersHeader = "corvid initialize answers 2"

// InitAnswersSuffix is appended to a unix socket's path to name the file
// of its daemon's initialize answers.
const InitAnswersSuffix = ".init"

// publishedDialects are the values of _meta["corvid.dev/dialect"] the file
// has answers for ("": not declared).
var publishedDialects = []string{"", DialectDefault, DialectACP, DialectCodeBuddy, DialectGasCity}

// InitializeKey is the key of req's answer in the published file, and
// whether the file has one (a dialect it does not list: no). It must be
// what fastrelay computes from the request's bytes
// (TestRelayKeyIsTheDaemonsKey).
func InitializeKey(req *acp.InitializeRequest) (string, bool) {
	dialect := ""
	if v, ok := req.Meta[metaDialect]; ok {
		s, isString := v.(string)
		if !isString {
			return "", false
		}
		dialect = s
	}
	known := false
	for _, d := range publishedDialects {
		known = known || d == dialect
	}
	if !known {
		return "", false
	}
	caps := req.ClientCapabilities
	return InitAnswerKey(dialect, watchesList(caps), caps != nil && caps.Auth.Terminal), true
}

// InitAnswerKey spells a published answer's key.
func InitAnswerKey(dialect string, watchesList, terminalAuth bool) string {
	bit := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	return dialect + "," + bit(watchesList) + "," + bit(terminalAuth)
}

// initAnswers is the hub's published copy.
type initAnswers struct {
	mu        sync.Mutex
	paths     []string
	published map[string]string // key → result
}

// PublishInitialize writes the initialize answers of a connection opened
// with opts to each path (a unix socket's path plus InitAnswersSuffix), and
// keeps them current from then on. Call it before the socket listens, so
// no relay reads a copy an earlier daemon left.
func (h *Hub) PublishInitialize(opts Options, paths ...string) error {
	a := &h.answers
	a.mu.Lock()
	defer a.mu.Unlock()
	a.paths = append(a.paths, paths...)
	return a.publishLocked(opts)
}

// Unpublish removes the published files (the daemon stops).
func (h *Hub) Unpublish() {
	a := &h.answers
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.paths {
		_ = os.Remove(p)
	}
	a.paths = nil
}

// check publishes afresh when resp, the answer to req, is not the
// published one for req's key.
func (a *initAnswers) check(opts Options, req *acp.InitializeRequest, resp acp.InitializeResponse) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.paths) == 0 {
		return
	}
	key, ok := InitializeKey(req)
	if !ok {
		return
	}
	b, err := resp.MarshalJSON()
	if err != nil || a.published[key] == string(b) {
		return
	}
	if err := a.publishLocked(opts); err != nil && opts.Logger != nil {
		opts.Logger.Warn("could not update the initialize answers relays read; they wait for the daemon's", "err", err)
	}
}

// publishLocked computes every key's answer and writes the files. A
// file that cannot be written is removed, so no relay reads an old one.
func (a *initAnswers) publishLocked(opts Options) error {
	answers, content, err := initAnswerFile(opts)
	if err != nil {
		return err
	}
	var first error
	for _, p := range a.paths {
		if err := writeFileAtomic(p, content); err != nil {
			_ = os.Remove(p)
			if first == nil {
				first = err
			}
		}
	}
	a.published = answers
	return first
}

// initAnswerFile is every key's answer, and the file that lists them.
func initAnswerFile(opts Options) (map[string]string, []byte, error) {
	answers := map[string]string{}
	var keys []string
	for _, dialect := range publishedDialects {
		for _, watch := range []bool{false, true} {
			for _, terminal := range []bool{false, true} {
				req := &acp.InitializeRequest{ClientCapabilities: &acp.ClientCapabilities{Auth: acp.ClientAuthCapabilities{Terminal: terminal}}}
				if dialect != "" {
					req.Meta = acp.Meta{metaDialect: dialect}
				}
				if watch {
					req.ClientCapabilities.Meta = acp.Meta{capSessionsChanged: true}
				}
				s := &Server{opts: opts}
				s.chooseDialect(req)
				b, err := s.initializeResponse(req).MarshalJSON()
				if err != nil {
					return nil, nil, err
				}
				key := InitAnswerKey(dialect, watch, terminal)
				answers[key] = string(b)
				keys = append(keys, key)
			}
		}
	}
	return answers, encodeInitAnswers(keys, answers), nil
}

// encodeInitAnswers lays the file out: the header line, an index of a
// line per key ("KEY OFFSET LENGTH", the offset from the file's start),
// an empty line, then each distinct answer once, each followed by a
// newline. A relay reads the index, then only its answer's bytes.
func encodeInitAnswers(keys []string, answers map[string]string) []byte {
	var distinct []string
	at := map[string]int{} // answer → index in distinct
	for _, k := range keys {
		if _, ok := at[answers[k]]; !ok {
			at[answers[k]] = len(distinct)
			distinct = append(distinct, answers[k])
		}
	}
	// The offsets depend on the index's length, which depends on the
	// offsets' digits: lay it out until it stays the same.
	var index []byte
	for size := -1; size != len(index); {
		size = len(index)
		offsets := make([]int, len(distinct))
		off := len(InitAnswersHeader) + 1 + size + 1
		for i, a := range distinct {
			offsets[i] = off
			off += len(a) + 1
		}
		index = index[:0]
		for _, k := range keys {
			i := at[answers[k]]
			index = append(index, k+" "+strconv.Itoa(offsets[i])+" "+strconv.Itoa(len(distinct[i]))+"\n"...)
		}
	}
	var buf bytes.Buffer
	buf.WriteString(InitAnswersHeader + "\n")
	buf.Write(index)
	buf.WriteByte('\n')
	for _, a := range distinct {
		buf.WriteString(a)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// writeFileAtomic replaces path with content, mode 0600.
func writeFileAtomic(path string, content []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
