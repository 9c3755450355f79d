// Package replay serves recorded provider traffic to corvid in tests: a
// tiny HTTP server that answers each request with the next recorded
// response, byte for byte, and keeps every request corvid sent (headers,
// body, arrival time) for the test to compare against what the real API
// accepted. It serves every protocol the recorded suites replay:
// Anthropic Messages and Gemini (test/recorded/anthropic, gemini), OpenAI
// Responses and Chat Completions (test/recorded/openai, chat).
//
// Recordings come in these shapes, all kept byte-identical in testdata
// (sources in test/recorded/SOURCES.md and SOURCES-openai.md; CheckFixtures
// and CheckSums guard them):
//   - chunk files (one JSON event per line, as the Vercel AI SDK keeps
//     them): Chunks frames them as the server-sent events the API sent,
//     ChatChunks adds the "data: [DONE]" that ends a Chat Completions
//     stream, and Split cuts a file holding several responses;
//   - VCR cassettes (YAML, as pydantic-ai keeps them): Cassette reads each
//     interaction's request and response; GoVCR reads go-vcr's layout.
package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Response is one recorded answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Request is one request corvid sent.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	At     time.Time // when it arrived
}

// JSON decodes the body into a generic value.
func (r Request) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	return v
}

// Server answers requests with recorded responses, in order.
type Server struct {
	*httptest.Server
	t         testing.TB
	mu        sync.Mutex
	responses []Response
	requests  []Request
}

// New starts a server that plays responses in order; a request beyond the
// last one fails the test and is answered 500.
func New(t testing.TB, responses ...Response) *Server {
	s := &Server{t: t, responses: responses}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	at := time.Now()
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, At: at})
	var resp *Response
	if n < len(s.responses) {
		resp = &s.responses[n]
	}
	s.mu.Unlock()
	if resp == nil {
		s.t.Errorf("replay: request %d (%s %s) has no recorded response", n+1, r.Method, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"message":"replay: no recorded response left for this request","code":"replay_exhausted"}}`)
		return
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		_, _ = w.Write(resp.Body)
		return
	}
	// An event stream goes out event by event, as the API sent it.
	for _, ev := range bytes.SplitAfter(resp.Body, []byte("\n\n")) {
		_, _ = w.Write(ev)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// Requests returns what the server received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// MustRequests returns what the server received, failing the test unless
// it is n requests.
func (s *Server) MustRequests(t testing.TB, n int) []Request {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) != n {
		t.Fatalf("corvid sent %d requests, want %d", len(reqs), n)
	}
	return reqs
}

// Items returns the list of objects under key in the JSON body (a Chat
// Completions request's "messages", a Responses request's "input"),
// failing the test when it is not one.
func (r Request) Items(t testing.TB, key string) []map[string]any {
	t.Helper()
	list, ok := r.JSON(t)[key].([]any)
	if !ok {
		t.Fatalf("request %s is not a list: %s", key, r.Body)
	}
	var out []map[string]any
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			t.Fatalf("request %s holds %v, not an object: %s", key, it, r.Body)
		}
		out = append(out, m)
	}
	return out
}

// Where returns the items whose field key is value (e.g. "role",
// "assistant"; "type", "reasoning").
func Where(items []map[string]any, key, value string) []map[string]any {
	var out []map[string]any
	for _, it := range items {
		if it[key] == value {
			out = append(out, it)
		}
	}
	return out
}

// Chunks frames a chunk file (one JSON event per line) as the event stream
// the API sent: "data: LINE" and a blank line per event, preceded by
// "event: TYPE" when named is true (Anthropic names each event by its
// JSON type; Gemini sends data lines only).
func Chunks(raw []byte, named bool) Response {
	var b bytes.Buffer
	for _, line := range Lines(raw) {
		if named {
			var ev struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(line, &ev)
			fmt.Fprintf(&b, "event: %s\n", ev.Type)
		}
		fmt.Fprintf(&b, "data: %s\n\n", line)
	}
	return Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: b.Bytes()}
}

// ChatChunks frames a chunk file as a Chat Completions server streams it:
// data lines only, ended by "data: [DONE]".
func ChatChunks(raw []byte) Response {
	r := Chunks(raw, false)
	r.Body = append(r.Body, "data: [DONE]\n\n"...)
	return r
}

// Lines returns the non-empty lines of a chunk file, without their line
// ends: the recorded events.
func Lines(chunks []byte) [][]byte {
	var out [][]byte
	for line := range bytes.Lines(chunks) {
		if l := bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// Split cuts a chunk file holding several responses into one chunk file
// per response: a new one begins at each line containing marker (for the
// Responses API, `"type":"response.created"`).
func Split(chunks []byte, marker string) [][]byte {
	var out [][]byte
	for _, l := range Lines(chunks) {
		if bytes.Contains(l, []byte(marker)) || len(out) == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(append(out[len(out)-1], l...), '\n')
	}
	return out
}

// Events decodes every event of a chunk file.
func Events(t testing.TB, chunks []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, l := range Lines(chunks) {
		var v map[string]any
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("chunk line %d: %v", i+1, err)
		}
		out = append(out, v)
	}
	return out
}

// JSONError is a recorded error body answered with status (and the given
// header lines, "Name: value").
func JSONError(status int, body []byte, header ...string) Response {
	h := http.Header{"Content-Type": {"application/json"}}
	for _, l := range header {
		k, v, _ := strings.Cut(l, ":")
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return Response{Status: status, Header: h, Body: body}
}

// Interaction is one recorded request and its response.
type Interaction struct {
	Method string
	URI    string
	// RequestBody is the request the real API accepted, as JSON (nil when
	// the cassette did not keep it).
	RequestBody json.RawMessage
	Response    Response
}

type cassette struct {
	Interactions []struct {
		Request struct {
			Method     string `yaml:"method"`
			URI        string `yaml:"uri"`
			ParsedBody any    `yaml:"parsed_body"`
			Body       any    `yaml:"body"`
		} `yaml:"request"`
		Response struct {
			Body       any                 `yaml:"body"`
			ParsedBody any                 `yaml:"parsed_body"`
			Headers    map[string][]string `yaml:"headers"`
			Status     any                 `yaml:"status"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

// typedBody is the newer pydantic-ai layout of a body: {type: json|text,
// content: ...}.
func typedBody(v any) (kind string, content any, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return "", nil, false
	}
	kind, _ = m["type"].(string)
	content, ok = m["content"]
	return kind, content, ok && kind != ""
}

// recordedHeader is a cassette's response header without the framing
// fields (length, transfer and content encoding) that described the
// recorded connection, not the body replayed here.
func recordedHeader(recorded map[string][]string) http.Header {
	h := http.Header{}
	for k, vs := range recorded {
		if strings.EqualFold(k, "content-length") || strings.EqualFold(k, "transfer-encoding") || strings.EqualFold(k, "content-encoding") {
			continue
		}
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h
}

// Cassette reads a VCR cassette in either of pydantic-ai's layouts: the
// older one (parsed_body for JSON bodies, body.string for streams, status
// {code}) and the newer one (body {type: json|text, content}, status as a
// number).
func Cassette(t testing.TB, raw []byte) []Interaction {
	t.Helper()
	var c cassette
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("cassette: %v", err)
	}
	var out []Interaction
	for _, in := range c.Interactions {
		it := Interaction{Method: in.Request.Method, URI: in.Request.URI}
		reqBody := in.Request.ParsedBody
		if kind, content, ok := typedBody(in.Request.Body); ok && kind == "json" {
			reqBody = content
		}
		if reqBody != nil {
			b, err := json.Marshal(reqBody)
			if err != nil {
				t.Fatalf("cassette request body: %v", err)
			}
			it.RequestBody = b
		}
		h := recordedHeader(in.Response.Headers)
		var body []byte
		respJSON := in.Response.ParsedBody
		if kind, content, ok := typedBody(in.Response.Body); ok {
			if kind == "json" {
				respJSON = content
			} else if s, isStr := content.(string); isStr {
				body = []byte(s)
			}
		} else if m, isMap := in.Response.Body.(map[string]any); isMap {
			s, _ := m["string"].(string)
			body = []byte(s)
		}
		if respJSON != nil {
			b, err := json.Marshal(respJSON)
			if err != nil {
				t.Fatalf("cassette response body: %v", err)
			}
			body = b
		}
		status := 0
		switch st := in.Response.Status.(type) {
		case int:
			status = st
		case map[string]any:
			status, _ = st["code"].(int)
		}
		it.Response = Response{Status: status, Header: h, Body: body}
		out = append(out, it)
	}
	return out
}

// Responses returns the responses of interactions, in order.
func Responses(in []Interaction) []Response {
	out := make([]Response, len(in))
	for i, it := range in {
		out[i] = it.Response
	}
	return out
}

// Read returns testdata/name.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CheckFixtures fails the test when a file in testdata is not listed in
// sums, its sha256 is not the listed one, or a listed file is missing: the
// recordings are public fixtures kept byte-identical to their sources
// (test/recorded/SOURCES.md, SOURCES-openai.md), never edited.
func CheckFixtures(t testing.TB, sums map[string]string) {
	t.Helper()
	checkFixtures(t, sums, "")
}

// CheckSums is CheckFixtures with the digests listed in testdata/SHA256SUMS
// (the `sha256sum` format), which is itself left out of the check.
func CheckSums(t testing.TB) {
	t.Helper()
	list, err := os.ReadFile(filepath.Join("testdata", "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not \"<sha256>  <name>\"", line)
		}
		sums[name] = sum
	}
	checkFixtures(t, sums, "SHA256SUMS")
}

func checkFixtures(t testing.TB, sums map[string]string, skip string) {
	t.Helper()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || e.Name() == skip {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		got := hex.EncodeToString(sum[:])
		want, ok := sums[e.Name()]
		switch {
		case !ok:
			t.Errorf("testdata/%s is not listed (sha256 %s); add it with its source to test/recorded/SOURCES*.md", e.Name(), got)
		case got != want:
			t.Errorf("testdata/%s changed: sha256 %s, want %s; recorded fixtures stay byte-identical", e.Name(), got, want)
		}
		seen[e.Name()] = true
	}
	var missing []string
	for name := range sums {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("testdata/%s is listed but missing", m)
	}
}

// Run is corvid serving one model against a replay server, driven by the
// fake editor.
type Run struct {
	*testkit.Editor
	Server    *Server
	Ctx       context.Context
	Workspace string
	SID       string // the session Ready opened
}

// Keys are set for the providers these tests use, so that a request
// carrying the wrong one is caught.
var Keys = map[string]string{
	"ANTHROPIC_API_KEY": "sk-ant-recorded-test-key",
	"GEMINI_API_KEY":    "gm-recorded-test-key",
}

// Start spawns the built `corvid acp -m model` with baseVar pointing at s
// and extra environment entries.
func Start(t *testing.T, s *Server, baseVar, model string, extraEnv ...string) *Run {
	t.Helper()
	return StartArgs(t, s, baseVar, []string{"acp", "-m", model}, extraEnv...)
}

// StartArgs is Start with the whole command line after the binary.
func StartArgs(t *testing.T, s *Server, baseVar string, args []string, extraEnv ...string) *Run {
	t.Helper()
	env := []string{"CORVID_KEYRING=off", baseVar + "=" + s.URL}
	for k, v := range Keys {
		env = append(env, k+"="+v)
	}
	return launch(t, s, args, append(env, extraEnv...))
}

// Key is the API key Open gives the provider; tests check it never leaks
// into what the editor sees.
const Key = "sk-replay-0123456789abcdef"

// Provider names a provider's model and environment variables.
type Provider struct {
	Model   string // provider:model, as given to -m
	KeyVar  string // e.g. OPENAI_API_KEY
	BaseVar string // e.g. OPENAI_BASE_URL
	Suffix  string // appended to the server URL for the base URL, e.g. "/v1"
}

// Open starts corvid for p against s (its key var set to Key, its base URL
// var to s.URL+Suffix, then extraEnv KEY=VALUE entries) with extraArgs
// after `acp -m MODEL` (e.g. --log-level debug), initializes and opens a
// session (r.SID).
func Open(t *testing.T, p Provider, s *Server, extraEnv []string, extraArgs ...string) *Run {
	t.Helper()
	env := append([]string{"CORVID_KEYRING=off", p.KeyVar + "=" + Key, p.BaseVar + "=" + s.URL + p.Suffix}, extraEnv...)
	r := launch(t, s, append([]string{"acp", "-m", p.Model}, extraArgs...), env)
	r.Ready(t)
	return r
}

func launch(t *testing.T, s *Server, args, env []string) *Run {
	t.Helper()
	bin := testkit.BuildCorvid(t)
	workspace := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	e := testkit.Start(t, bin, testkit.Options{Args: args, Env: env, Dir: workspace})
	return &Run{Editor: e, Server: s, Ctx: ctx, Workspace: workspace}
}

// Ready initializes as a minimal client and opens a session, which it
// also keeps in r.SID.
func (r *Run) Ready(t *testing.T) string {
	t.Helper()
	if _, rerr := r.Initialize(r.Ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	r.SID = r.NewSession(r.Ctx, r.Workspace)
	return r.SID
}

// SetThought sets r.SID's thought level (off, low, medium, high, max).
func (r *Run) SetThought(t *testing.T, level string) {
	t.Helper()
	if _, rerr := r.Call(r.Ctx, "session/set_config_option", map[string]any{"sessionId": r.SID, "configId": "thought_level", "value": level}); rerr != nil {
		t.Fatalf("set thought_level %s: %v", level, rerr)
	}
}

// Used is the used and cost (0 when absent) of r.SID's last usage_update.
func (r *Run) Used(t *testing.T) (used int64, cost float64) {
	t.Helper()
	used, _, c := UsedOfLastUsage(t, r.Updates(r.SID))
	if c != nil {
		cost = *c
	}
	return used, cost
}

// SetOption sets a session config option.
func (r *Run) SetOption(t *testing.T, sid, id string, value any) {
	t.Helper()
	r.MustCall(r.Ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": id, "value": value}, nil)
}

// MustPrompt sends text and fails unless the turn ends with want.
func (r *Run) MustPrompt(t *testing.T, sid, text, want string) {
	t.Helper()
	stop, rerr := r.Prompt(r.Ctx, sid, text)
	if rerr != nil || stop != want {
		t.Fatalf("prompt %q: stop %q, error %v\nstderr:\n%s", text, stop, rerr, r.Stderr())
	}
}

// UsedOfLastUsage is the last usage_update's used and size.
func UsedOfLastUsage(t *testing.T, ups []testkit.Update) (used, size int64, cost *float64) {
	t.Helper()
	us := testkit.OfKind(ups, "usage_update")
	if len(us) == 0 {
		t.Fatal("no usage_update")
	}
	var u struct {
		Used int64 `json:"used"`
		Size int64 `json:"size"`
		Cost *struct {
			Amount float64 `json:"amount"`
		} `json:"cost"`
	}
	if err := json.Unmarshal(us[len(us)-1].Raw, &u); err != nil {
		t.Fatal(err)
	}
	if u.Cost != nil {
		cost = &u.Cost.Amount
	}
	return u.Used, u.Size, cost
}

// CutAfter keeps the first n events of a framed event stream and appends
// tail (one more event, framed by the caller): a recorded stream that
// fails part way, as the API's documented in-stream error event does.
func CutAfter(r Response, n int, tail string) Response {
	events := bytes.SplitAfter(r.Body, []byte("\n\n"))
	if n > len(events) {
		n = len(events)
	}
	body := append(bytes.Join(events[:n], nil), tail...)
	return Response{Status: r.Status, Header: r.Header, Body: body}
}

// goVCR is the go-vcr cassette layout (version 1) the Anthropic Go SDK
// ships: bodies as strings, the status code as a number.
type goVCR struct {
	Interactions []struct {
		Request struct {
			Body   string `yaml:"body"`
			URL    string `yaml:"url"`
			Method string `yaml:"method"`
		} `yaml:"request"`
		Response struct {
			Body    string              `yaml:"body"`
			Headers map[string][]string `yaml:"headers"`
			Code    int                 `yaml:"code"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

// GoVCR reads a go-vcr cassette: each interaction's request body (the
// request the real API accepted) and its response, served as recorded.
func GoVCR(t testing.TB, raw []byte) []Interaction {
	t.Helper()
	var c goVCR
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("go-vcr cassette: %v", err)
	}
	var out []Interaction
	for _, in := range c.Interactions {
		it := Interaction{Method: in.Request.Method, URI: in.Request.URL}
		if in.Request.Body != "" {
			if !json.Valid([]byte(in.Request.Body)) {
				t.Fatalf("go-vcr cassette: request body is not JSON: %.200s", in.Request.Body)
			}
			it.RequestBody = json.RawMessage(in.Request.Body)
		}
		h := recordedHeader(in.Response.Headers)
		it.Response = Response{Status: in.Response.Code, Header: h, Body: []byte(in.Response.Body)}
		out = append(out, it)
	}
	return out
}

// ModuleFile returns the bytes of file rel inside the module cache copy of
// module (the version go.mod requires), after checking its sha256. The
// test is skipped when the module's directory cannot be found (module not
// downloaded, no go command); a wrong digest fails it.
func ModuleFile(t testing.TB, module, rel, sha string) []byte {
	t.Helper()
	dir := moduleDir(t, module)
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Skipf("%s: %s not readable in the module cache (%v)", module, rel, err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != sha {
		t.Fatalf("%s/%s: sha256 %s, want %s; the recording is not the one this test was written against", module, rel, got, sha)
	}
	return b
}

var (
	modDirsMu sync.Mutex
	modDirs   = map[string]string{}
)

// moduleDir is `go list -m -f {{.Dir}} module`, run in the test's package
// directory (inside this module), falling back to GOMODCACHE/module@version.
func moduleDir(t testing.TB, module string) string {
	t.Helper()
	modDirsMu.Lock()
	defer modDirsMu.Unlock()
	if d, ok := modDirs[module]; ok {
		if d == "" {
			t.Skipf("module %s is not in the module cache (run `go mod download %s`)", module, module)
		}
		return d
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}\t{{.Version}}", module).Output()
	dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if err == nil && dir == "" && version != "" {
		if cache, cerr := exec.Command("go", "env", "GOMODCACHE").Output(); cerr == nil {
			d := filepath.Join(strings.TrimSpace(string(cache)), filepath.FromSlash(module)+"@"+version)
			if st, serr := os.Stat(d); serr == nil && st.IsDir() {
				dir = d
			}
		}
	}
	if err != nil {
		dir = ""
	}
	modDirs[module] = dir
	if dir == "" {
		t.Skipf("module %s is not in the module cache (run `go mod download %s`): %v", module, module, err)
	}
	return dir
}
