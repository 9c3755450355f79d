package anthropic

import (
	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/corvid-agent/corvid/internal/llm"
)

// sdkParams is the request as the SDK's parameter types build it.
func sdkParams(m *model, req llm.Request) (anthropic.MessageNewParams, error) { return m.params(req) }
