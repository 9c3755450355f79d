package agent

// The core's typed events (issue #30, "typed events, dialects per
// connection"). An Event's Kind says what happened; its Tags say the rest
// of what the core knows about it, as typed values: which turn a prompt
// opens, which sub-agent an event comes from, that a chunk is the final
// output, a team change, a drain turn's start and end. Nothing here is
// spelled in a host's vocabulary: each front end encodes the tags for its
// own connection (internal/acpserver: front.go for ACP v1 and corvid's own
// _meta, codebuddy.go for CodeBuddy's keys, gascity.go for Gas City), so
// two clients of one session may hear the same event in two dialects. The
// stored rows hold the tags under the JSON names below (schema 3 of the
// store; internal/store/retype converts the rows of earlier releases).

// Tags are the typed facts an Event carries beyond its kind. At most the
// fields its kind names are set; the zero Tags says nothing.
type Tags struct {
	// TurnID is the client's id of the turn a user chunk's prompt opens
	// (TurnOptions.TurnID, e.g. CodeBuddy's client turn id).
	TurnID string `json:"turnId,omitempty"`
	// Member is the sub-agent (team member or detached worker) an event
	// comes from (subagent.go tags every event of one).
	Member *Member `json:"member,omitempty"`
	// FinalOutput marks the message chunk that carries the final output.
	FinalOutput *FinalOutputTag `json:"finalOutput,omitempty"`
	// SubagentUsage, on an EventUsage a sub-agent's response caused: the
	// token totals of the session's sub-agents so far.
	SubagentUsage *TokenTotals `json:"subagentUsage,omitempty"`
	// Team is an EventTeam's change of the session's team.
	Team TeamUpdate `json:"team,omitempty"`
	// Drain is the drain turn an EventDrainStarted opens or an
	// EventDrainEnded closes (worker.go).
	Drain *Drain `json:"drain,omitempty"`
}

// same reports whether a and b tag a chunk alike, so that the event log
// may merge them into one row. Members and final outputs are compared as
// pointers: one sub-agent tags all its events with one Member.
func (a *Tags) same(b *Tags) bool {
	return a.TurnID == b.TurnID && a.Member == b.Member && a.FinalOutput == b.FinalOutput &&
		a.SubagentUsage == nil && b.SubagentUsage == nil && a.Team == nil && b.Team == nil &&
		a.Drain == nil && b.Drain == nil
}

// Member names the sub-agent an event comes from.
type Member struct {
	// ID is the sub-agent's session id (teamUpdate's sessionId).
	ID   string `json:"id"`
	Name string `json:"name"`
	// ParentToolCallID is the task call the sub-agent runs under.
	ParentToolCallID string `json:"parentToolCallId"`
	// Depth is 1 for a child of the root session.
	Depth int `json:"depth"`
	// Background marks a detached worker, whose events belong to no turn.
	Background bool `json:"background,omitempty"`
}

// FinalOutputTag marks the final output with its shape as --output-format
// named it.
type FinalOutputTag struct {
	Format string `json:"format"`
}

// TokenTotals are input and output tokens summed.
type TokenTotals struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// TeamUpdate is one change of a session's team: the roster's own JSON
// object (team.go: type, teamName, isAutoTeam, members). It is the team's
// state, not a host's _meta key; a front end says under which key its host
// expects it.
type TeamUpdate map[string]any

// Drain is a drain turn (worker.go): the turn the agent starts by itself
// when detached workers finished while the session was idle.
type Drain struct {
	RequestID string `json:"requestId"`
	// Reason is why it started (DrainReason); on EventDrainStarted.
	Reason string `json:"reason,omitempty"`
	// StopReason and Error say how it ended; on EventDrainEnded.
	StopReason string `json:"stopReason,omitempty"`
	Error      string `json:"error,omitempty"`
}

// TurnTag names the turn whose events are emitted now: a prompted turn's
// client id, or a drain turn's request id (at most one is set).
type TurnTag struct {
	ID      string
	DrainID string
}

// FromWorker reports whether ev is a detached worker's, which belongs to no
// turn of its session.
func (ev *Event) FromWorker() bool { return ev.Member != nil && ev.Member.Background }
