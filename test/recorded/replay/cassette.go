package replay

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

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
