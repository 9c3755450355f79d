package acpserver

import (
	"sync"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// Dialects per connection (issue #30). The agent hands every front end the
// same typed events (agent.Tags); each connection spells them for its own
// host. Under `corvid serve` two clients of one session may speak two
// dialects, so the dialect belongs to the connection (Server), chosen at
// initialize:
//
//   - ACP v1 with corvid's _meta keys (corvid.dev/…, this file) for every
//     host;
//   - CodeBuddy's _meta vocabulary (codebuddy.go, the one place that knows
//     its keys): on by default, as `corvid acp` has always sent it
//     (docs/codebuddy.md: "the _meta keys are there for every host");
//   - CodeBuddy's non-schema frames (session_end, root-level capability
//     flags, the turn id on every update): `--compat codebuddy`, or an
//     initialize that declares it.
//
// A client declares its dialect in initialize's
// _meta["corvid.dev/dialect"]: "codebuddy" (the vocabulary and the
// frames), "acp" (ACP v1 and corvid's own keys only: no CodeBuddy key on
// any frame), "gascity" or "default". Without it the process's --compat
// decides. Gas City's shapes (gascity.go: message text as top-level
// content too) follow from the client prompting with messages, or from
// declaring "gascity", which a client that only watches a session another
// client prompts needs.

// metaDialect is initialize's _meta key that declares the client's dialect.
const metaDialect = "corvid.dev/dialect"

// Values of _meta["corvid.dev/dialect"].
const (
	DialectDefault   = "default"
	DialectACP       = "acp"
	DialectCodeBuddy = CompatCodeBuddy
	DialectGasCity   = "gascity"
)

// corvid's own _meta keys of the typed tags.
const (
	// metaSubagent: {id, name, parentToolCallId, depth[, background]}.
	metaSubagent = "corvid.dev/subagent"
	// metaSubagentUsage, on the root's usage_update: the sub-agents'
	// token totals {inputTokens, outputTokens}.
	metaSubagentUsage = "corvid.dev/subagentUsage"
	// metaFinalOutput: {format} on the chunk of the final output.
	metaFinalOutput = "corvid.dev/finalOutput"
)

// dialect is what one connection's host speaks beyond ACP v1.
type dialect struct {
	// vocabulary: CodeBuddy's _meta keys ride on the updates.
	vocabulary bool
	// frames: CodeBuddy's non-schema frames.
	frames bool
}

// dialectFor is the dialect of a connection whose client declared
// declared ("" or "default": none) under the process's --compat.
func dialectFor(compat string, declared any) dialect {
	switch declared {
	case DialectCodeBuddy:
		return dialect{vocabulary: true, frames: true}
	case DialectACP:
		return dialect{}
	}
	return dialect{vocabulary: true, frames: compat == CompatCodeBuddy}
}

// dialect is this connection's dialect: the one initialize chose, or the
// process's before it.
func (s *Server) dialect() dialect {
	if d := s.chosen.Load(); d != nil {
		return *d
	}
	return dialectFor(s.opts.Compat, nil)
}

// chooseDialect records the dialect the client's initialize declares.
func (s *Server) chooseDialect(req *acp.InitializeRequest) {
	declared := req.Meta[metaDialect]
	d := dialectFor(s.opts.Compat, declared)
	s.chosen.Store(&d)
	if declared == DialectGasCity {
		s.messagesHost.Store(true)
	}
}

// tagMeta is the _meta an event's tags become on this connection (nil when
// they say nothing here).
func (s *Server) tagMeta(ev *agent.Event) acp.Meta {
	var m acp.Meta
	set := func(k string, v any) {
		if m == nil {
			m = acp.Meta{}
		}
		m[k] = v
	}
	if mem := ev.Member; mem != nil {
		sub := map[string]any{"id": mem.ID, "name": mem.Name, "parentToolCallId": mem.ParentToolCallID, "depth": mem.Depth}
		if mem.Background {
			sub["background"] = true
		}
		set(metaSubagent, sub)
	}
	if fo := ev.FinalOutput; fo != nil {
		set(metaFinalOutput, map[string]any{"format": fo.Format})
	}
	if u := ev.SubagentUsage; u != nil {
		set(metaSubagentUsage, map[string]any{"inputTokens": u.InputTokens, "outputTokens": u.OutputTokens})
	}
	if s.dialect().vocabulary {
		m = codebuddyTagMeta(m, ev)
	}
	return m
}

// turnMeta is the _meta that tags the updates of the turn tag names (nil:
// none on this connection).
func (s *Server) turnMeta(tag agent.TurnTag) acp.Meta {
	if !s.dialect().vocabulary {
		return nil
	}
	return codebuddyTurnMeta(tag)
}

// turnMetaCache keeps the last turn's _meta, so that the updates of one
// turn share one map (tagging a chunk costs no allocation).
type turnMetaCache struct {
	mu   sync.Mutex
	tag  agent.TurnTag
	meta acp.Meta
}

func (c *turnMetaCache) get(s *Server, tag agent.TurnTag) acp.Meta {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.meta == nil || c.tag != tag {
		c.tag, c.meta = tag, s.turnMeta(tag)
	}
	return c.meta
}
