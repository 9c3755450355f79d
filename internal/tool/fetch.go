package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

//go:embed fetch.md
var fetchDescription string

const (
	fetchTimeout   = 30 * time.Second
	maxFetchBody   = 5 << 20
	maxFetchOutput = 100 << 10
)

// Fetch GETs a URL and returns its text.
type Fetch struct{}

type fetchInput struct {
	URL    string `json:"url"`
	Format string `json:"format,omitempty"`
}

func (Fetch) Name() string        { return "fetch" }
func (Fetch) Description() string { return fetchDescription }
func (Fetch) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"url":{"type":"string","description":"http(s) URL"},` +
		`"format":{"type":"string","enum":["markdown","raw"],"description":"markdown (default) reduces HTML to text; raw returns the body as is"}},` +
		`"required":["url"]}`)
}

func (Fetch) Describe(env *Env, raw json.RawMessage) Preview {
	var in fetchInput
	looseDecode(raw, &in)
	return Preview{Kind: KindFetch, Title: "Fetch " + shorten(in.URL, 100), Access: AccessNetwork, URL: in.URL}
}

func (Fetch) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in fetchInput
	if r := decodeInput("fetch", call.Input, &in); r != nil {
		return *r, nil
	}
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ErrorResult(fmt.Sprintf("%q is not an absolute http or https URL", in.URL)), nil
	}
	switch in.Format {
	case "", "markdown", "raw":
	default:
		return ErrorResult(fmt.Sprintf("format %q is not markdown or raw", in.Format)), nil
	}
	client := env.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: fetchTimeout}
	}
	tctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return ErrorResult(fmt.Sprintf("bad request: %v", err)), nil
	}
	req.Header.Set("User-Agent", "corvid (coding agent)")
	req.Header.Set("Accept", "text/html,text/markdown,text/plain,application/json,*/*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return ErrorResult(fmt.Sprintf("fetch %s failed: %v", u, err)), nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBody+1))
	if err != nil {
		return ErrorResult(fmt.Sprintf("reading %s failed: %v", u, err)), nil
	}
	cut := len(body) > maxFetchBody
	body = body[:min(len(body), maxFetchBody)]
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ctype == "" {
		ctype = http.DetectContentType(body)
		ctype, _, _ = mime.ParseMediaType(ctype)
	}
	if !textual(ctype) || !isText(body[:min(len(body), 8192)]) {
		return ErrorResult(fmt.Sprintf("%s returned %s, which is not text", u, ctype)), nil
	}
	var text string
	if in.Format != "raw" && (ctype == "text/html" || ctype == "application/xhtml+xml") {
		text = htmlToMarkdown(string(body), resp.Request.URL)
	} else {
		text = strings.ToValidUTF8(string(body), "\uFFFD")
	}
	if len(text) > maxFetchOutput {
		k := maxFetchOutput
		for k > 0 && !utf8.RuneStart(text[k]) {
			k--
		}
		text, cut = text[:k], true
	}
	if cut {
		text += "\n\n… (content truncated)"
	}
	header := fmt.Sprintf("%s — %s, %s\n\n", resp.Request.URL, resp.Status, ctype)
	if resp.StatusCode >= 400 {
		return Result{Output: header + shorten(text, 2000), IsError: true}, nil
	}
	return Result{Output: header + text}, nil
}

// textual reports whether a media type is worth returning as text.
func textual(ctype string) bool {
	if strings.HasPrefix(ctype, "text/") {
		return true
	}
	switch ctype {
	case "application/json", "application/xml", "application/xhtml+xml", "application/javascript",
		"application/x-yaml", "application/yaml", "application/toml", "application/ld+json":
		return true
	}
	return strings.HasSuffix(ctype, "+json") || strings.HasSuffix(ctype, "+xml")
}
