package gemini

import (
	"encoding/json"
	"strings"
	"time"
)

// The JSON shapes of the v1beta generateContent API that corvid uses, by
// their wire names. Fields corvid does not send or read are left out;
// unknown response fields are ignored.

// generateRequest is the body of streamGenerateContent.
type generateRequest struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []tool            `json:"tools,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

// content is one turn: role "user" or "model".
type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

// part is one piece of a turn; exactly one of Text (with Thought),
// InlineData, FunctionCall or FunctionResponse is meaningful.
// ThoughtSignature is base64 text on the wire and kept as such here.
type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type blob struct {
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"` // base64 on the wire
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parametersJsonSchema"`
}

type generationConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"` // Gemini 3: minimal, low, medium, high
}

// generateResponse is one SSE chunk of the stream. A chunk carrying Error
// instead is a failure inside a stream that began with HTTP 200.
type generateResponse struct {
	Candidates     []candidate     `json:"candidates"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	Error          *apiError       `json:"error"`
}

type candidate struct {
	Content       *content `json:"content"`
	FinishReason  string   `json:"finishReason"`
	FinishMessage string   `json:"finishMessage"`
}

type promptFeedback struct {
	BlockReason string `json:"blockReason"`
}

// usageMetadata counts tokens; promptTokenCount includes
// cachedContentTokenCount.
type usageMetadata struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
}

// apiError is Google's error body, {"error": {...}}, both as an HTTP error
// answer and as a chunk inside a stream.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"` // e.g. RESOURCE_EXHAUSTED
	// Details are google.rpc status details; corvid reads RetryInfo.
	Details []struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"` // a protobuf Duration: "34.4s"
	} `json:"details"`
}

// retryDelay is the delay a RetryInfo detail asks for (0 if none).
func (e *apiError) retryDelay() time.Duration {
	for _, d := range e.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
			if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
				return v
			}
		}
	}
	return 0
}

// Finish reasons that Stream treats specially; any other non-empty reason
// except OTHER ends the turn as a refusal.
const (
	finishUnspecified           = "FINISH_REASON_UNSPECIFIED"
	finishStop                  = "STOP"
	finishMaxTokens             = "MAX_TOKENS"
	finishOther                 = "OTHER"
	finishMalformedFunctionCall = "MALFORMED_FUNCTION_CALL"
)

// MarshalJSON writes the part; a signed part with no data is a text part
// with empty text, as Gemini sent it (the signature must go back on a
// part of the same kind).
func (p part) MarshalJSON() ([]byte, error) {
	type plain part
	if p.Text != "" || p.ThoughtSignature == "" || p.InlineData != nil || p.FunctionCall != nil || p.FunctionResponse != nil {
		return json.Marshal(plain(p))
	}
	return json.Marshal(struct {
		Text string `json:"text"`
		plain
	}{"", plain(p)})
}
