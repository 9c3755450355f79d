package gemini

import "github.com/corvid-agent/corvid/internal/llm"

// The tests open models through llm.Open, as corvid does once
// providers.Register has run.
func init() { Register(llm.Default) }
