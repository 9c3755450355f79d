// Package gemini replays real recorded Gemini API traffic (see
// ../SOURCES.md) to the built corvid over ACP and checks what corvid shows
// the editor and what it sends back, against the follow-up requests the
// real API accepted where the recording has them.
//
//	go test ./test/recorded/gemini/
package gemini

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// fixtures are the recordings in testdata and their sha256: they stay
// byte-identical to their sources.
var fixtures = map[string]string{
	"fantasy-gemini-2.5-flash-multi_tool_streaming.yaml":     "f4d02665127ce86eea142b54d9774ffffd73d74ae5a1e0ccd654a87ef45171f3",
	"fantasy-gemini-3-pro-preview-thinking-streaming.yaml":   "3df07ac96908b7887af838dcec1b317917e459b49bef798336948a0bf3bb3e9d",
	"google-reasoning-gemini3.chunks.txt":                    "0923098ac70dc58b7bb790d5a0b9f90084469dd519df0a0d7a464af3ad538dc4",
	"google-text.chunks.txt":                                 "9269d63d64c886e9eb99e7e63eb67ba917023821b41751c7b4b5410777710b36",
	"google-tool-call-gemini3.chunks.txt":                    "9405258bca42dcfc8f7b1156c3262a34989bd48a40141322859d4e5a4b602d79",
	"test_google_model_iter_stream.yaml":                     "701fd748253b419121a83e060e4114ac69561fa79f48e9384212fe14dd3624ec",
	"test_google_model_thinking_part_iter.yaml":              "c40a472d336fa4569a104ccc9ebde420bfcffe1792589af92a1045176c1fe77d",
	"test_google_streaming_tool_call_thought_signature.yaml": "a45fa53add3160088422a0480ef4c78c2d23eb8a3e579043da89b96ab0eab801",
}

func TestFixturesAreByteIdentical(t *testing.T) { replay.CheckFixtures(t, fixtures) }

func start(t *testing.T, model string, responses ...replay.Response) *replay.Run {
	t.Helper()
	return replay.Start(t, replay.New(t, responses...), "GEMINI_BASE_URL", "gemini:"+model)
}

// chunks is a chunk-file fixture framed as the SSE stream Gemini sends.
func chunks(t *testing.T, name string) replay.Response {
	return replay.Chunks(replay.Read(t, name), false)
}

// body is the wire shape of the parts of a generateContent request.
type body struct {
	Contents         []content `json:"contents"`
	GenerationConfig *struct {
		MaxOutputTokens int            `json:"maxOutputTokens"`
		ThinkingConfig  map[string]any `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

type content struct {
	Role  string `json:"role"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             *string         `json:"text"`
	Thought          bool            `json:"thought"`
	ThoughtSignature string          `json:"thoughtSignature"`
	FunctionCall     *functionCall   `json:"functionCall"`
	FunctionResponse json.RawMessage `json:"functionResponse"`
	Raw              map[string]any  `json:"-"`
}

type functionCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

func decode(t *testing.T, raw []byte) body {
	t.Helper()
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("request body: %v\n%s", err, raw)
	}
	return b
}

// sigBytes decodes a thoughtSignature in any base64 alphabet (the Python
// SDK re-encodes it URL-safe; the API sends standard).
func sigBytes(t *testing.T, s string) []byte {
	t.Helper()
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b
		}
	}
	t.Fatalf("thoughtSignature %q is not base64", s)
	return nil
}
