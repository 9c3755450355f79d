package acpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// CodeBuddy's dialect (docs/codebuddy.md). Without --compat codebuddy every
// frame corvid writes stays exact against the ACP v1 schema: what CodeBuddy
// adds there is carried in _meta (multitask support, the turn id, the
// userinfo) or is an answer to a dialect method only a CodeBuddy client
// calls. With it, the dialect's non-schema frames are added: root-level
// agentCapabilities flags and the session_end update closing each turn.

// CompatCodeBuddy is the --compat value of CodeBuddy's dialect.
const CompatCodeBuddy = "codebuddy"

// Dialect _meta keys and ids: this file is the one place of corvid that
// spells CodeBuddy's vocabulary (dialect.go). The event log stores none of
// them (agent.Tags); internal/store/retype knows the ones of earlier
// releases' rows, to convert them.
const (
	metaMultitaskSupport = "codebuddy.ai/multitaskSupport"
	metaUserInfo         = "codebuddy.ai/userinfo"
	optMultitask         = "multitask"
	categoryMultitask    = "_codebuddy.ai/multitask"
	// The client turn id (turnid.go).
	metaConversationRequestID = "codebuddy.ai/conversationRequestId"
	// codeMode (codemode.go): session/new's initial value, the capability
	// flag and the option's category.
	metaCodeMode        = "codebuddy.ai/codeMode"
	metaCodeModeSupport = "codebuddy.ai/codeModeSupport"
	categoryCodeMode    = "_codebuddy.ai/codeMode"
	// Agent teams (C34–C39): the member an update comes from, and a team
	// change on a session_info_update.
	metaMemberEvent = "codebuddy.ai/memberEvent"
	metaTeamUpdate  = "codebuddy.ai/teamUpdate"
	// Drain turns (drain.go): the opener {requestId, reason}, the closer
	// {requestId, stopReason[, error]}, and the id on every update between.
	metaUnsolicitedTurn = "codebuddy.ai/unsolicitedTurn"
	metaSessionEnd      = "codebuddy.ai/sessionEnd"
	metaRequestID       = "codebuddy.ai/requestId"
)

// codebuddyTagMeta adds CodeBuddy's keys for ev's tags to m (which may be
// nil) and returns it.
func codebuddyTagMeta(m acp.Meta, ev *agent.Event) acp.Meta {
	set := func(k string, v any) {
		if m == nil {
			m = acp.Meta{}
		}
		m[k] = v
	}
	if ev.TurnID != "" {
		set(metaConversationRequestID, ev.TurnID)
	}
	if ev.Member != nil {
		set(metaMemberEvent, ev.Member.Name)
	}
	if ev.Team != nil {
		set(metaTeamUpdate, map[string]any(ev.Team))
	}
	if d := ev.Drain; d != nil {
		set(metaRequestID, d.RequestID)
		switch ev.Kind {
		case agent.EventDrainStarted:
			set(metaUnsolicitedTurn, map[string]any{"requestId": d.RequestID, "reason": d.Reason})
		case agent.EventDrainEnded:
			end := map[string]any{"requestId": d.RequestID}
			if d.StopReason != "" {
				end["stopReason"] = d.StopReason
			}
			if d.Error != "" {
				end["error"] = d.Error
			}
			set(metaSessionEnd, end)
		}
	}
	return m
}

// codebuddyTurnMeta is the _meta that tags a turn's updates: a prompted
// turn's client id, or a drain turn's request id.
func codebuddyTurnMeta(tag agent.TurnTag) acp.Meta {
	switch {
	case tag.ID != "":
		return acp.Meta{metaConversationRequestID: tag.ID}
	case tag.DrainID != "":
		return acp.Meta{metaRequestID: tag.DrainID}
	}
	return nil
}

// UserInfo is the configured identity authenticate reports.
type UserInfo struct {
	UserID, UserName, UserNickname string
}

// codebuddy reports whether this connection gets CodeBuddy's non-schema
// frames (dialect.go).
func (s *Server) codebuddy() bool { return s.dialect().frames }

// dialectCapabilities adds the dialect's capability flags. This is the one
// place for them: a new CodeBuddy feature (codeMode: codeModeSupport) adds
// its _meta key and its root-level flag here.
func (s *Server) dialectCapabilities(caps *acp.AgentCapabilities) {
	if !s.dialect().vocabulary {
		return // a client that declared plain ACP (dialect.go)
	}
	advertiseCodeMode(caps)
	yes := true
	if s.multitaskAvailable() {
		if caps.Meta == nil {
			caps.Meta = acp.Meta{}
		}
		caps.Meta[metaMultitaskSupport] = true
		if s.codebuddy() {
			caps.MultitaskSupport = &yes
		}
	}
	if s.codebuddy() { // codeMode is always available (codemode.go)
		caps.CodeModeSupport = &yes
	}
}

// userInfoMeta is authenticate's _meta: the configured identity, if any.
func (s *Server) userInfoMeta() acp.Meta {
	u := s.opts.UserInfo
	if u == nil || *u == (UserInfo{}) {
		return nil
	}
	return acp.Meta{metaUserInfo: map[string]any{"userId": u.UserID, "userName": u.UserName, "userNickname": u.UserNickname}}
}

// sessionEnd closes a turn in the dialect (session_end, not an ACP v1
// update kind); nothing without --compat codebuddy.
func (ss *session) sessionEnd(stop string, turn acp.Meta) {
	if !ss.srv.codebuddy() {
		return
	}
	ss.notify(acp.SessionEndUpdate{SessionUpdate: "session_end", StopReason: stop, Meta: turn})
}

// SetAgent switches a live session's agent profile (session/set_agent).
func (s *Server) SetAgent(_ context.Context, req *acp.SetSessionAgentRequest) (acp.SetSessionAgentResponse, error) {
	var none acp.SetSessionAgentResponse
	ss, err := s.lookup(req.SessionID)
	if err != nil {
		return none, err
	}
	if s.opts.SetAgent == nil {
		return none, acp.InvalidParams("Unknown agent", "this corvid has no agent profiles to switch to")
	}
	before := ss.Controls()
	p, err := s.opts.SetAgent(req.Name(), ss.Cwd())
	if err != nil {
		return none, acp.InvalidParams("Unknown agent", err.Error())
	}
	if err := ss.SwitchProfile(p); err != nil {
		if after := ss.Controls(); after.Model != before.Model {
			// The model switch was stored before the profile's write
			// failed: the client hears of what did change.
			ss.settingsChanged(false)
		}
		return none, rpcError(s, err)
	}
	after := ss.Controls()
	if after.Model != before.Model {
		ss.settingsChanged(false)
	}
	return acp.SetSessionAgentResponse{Meta: sessionMeta(after)}, nil
}

// restoreProfile re-applies a profile session/set_agent chose (it is
// stored with the session) to a loaded session: its system prompt and
// instructions; the model stays the session's stored one.
func (s *Server) restoreProfile(ss *session) {
	c := ss.Controls()
	if c.Agent == nil || c.Agent.Name == s.opts.LaunchAgent || s.opts.SetAgent == nil {
		return
	}
	p, err := s.opts.SetAgent(c.Agent.Name, ss.Cwd())
	if err != nil {
		s.log.Warn("the session's agent profile cannot be applied", "session", ss.id, "agent", c.Agent.Name, "err", err)
		return
	}
	p.Model = ""
	if err := ss.SwitchProfile(p); err != nil {
		s.log.Warn("the session's agent profile cannot be applied", "session", ss.id, "agent", c.Agent.Name, "err", err)
	}
}

// multitaskAvailable says whether sessions on this connection may have
// the multitask overlay (C44, C45).
func (s *Server) multitaskAvailable() bool { return !s.opts.NoBackgroundTasks }

// configOptionsFor is the session's option set: configOptions plus the
// dialect's multitask boolean (exactly as CodeBuddy gives it, C47) where
// the session may have it and the client takes boolean options. The schema
// lets an agent include type "boolean" entries only for a client that
// advertises clientCapabilities.session.configOptions.boolean; the others
// (acpx would send the string "true") find multitask through
// agentCapabilities._meta and session/set_multitask (docs/codebuddy.md).
func (s *Server) configOptionsFor(c agent.Controls) []acp.SessionConfigOption {
	opts := configOptions(c)
	if s.multitaskAvailable() && s.booleanOptions() {
		opts = append(opts, acp.SessionConfigOption{Type: "boolean", ID: optMultitask, Name: "Multitask",
			Description: "Coordinate detached workers while keeping the current agent mode",
			Category:    categoryMultitask, CurrentValue: c.Multitask})
	}
	return opts
}

// booleanOptions says whether the client advertised boolean config options.
func (s *Server) booleanOptions() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientCaps.BooleanConfigOptions()
}

// multitaskRefusal says why ss cannot have the overlay ("" when it can).
// Every session served here is a top-level one, created, loaded or resumed
// on this connection: sub-agent sessions are never in the table, and a
// session live on another connection is not in this one's (lookup answers
// "Unknown session").
func (s *Server) multitaskRefusal(ss *session) string {
	if !s.multitaskAvailable() {
		return "multitask is unavailable: background tasks are disabled (CORVID_DISABLE_BACKGROUND_TASKS is set)"
	}
	return ss.MultitaskUnavailable()
}

// checkOwner refuses a write to a session another connection took over
// since (C56): it loaded or resumed the session after this one did.
func (s *Server) checkOwner(ctx context.Context, ss *session) error {
	owned, err := ss.OwnedBy(ctx, s.connID)
	if err != nil {
		return rpcError(s, err)
	}
	if !owned {
		return acp.InvalidParams("Invalid params", "session "+ss.id+" is owned by another connection: it was loaded or resumed there after this one; load it again here to take it over")
	}
	return nil
}

// writeMultitask is what both writes share (C54): the stamp, persistence
// (with the session's settings) and the config_option_update. A store that
// fails the write changes nothing and sends nothing: its error is returned.
func (s *Server) writeMultitask(ss *session, on bool) (already bool, opts []acp.SessionConfigOption, err error) {
	if already, err = ss.SetMultitask(on); err != nil {
		return false, nil, err
	}
	opts = s.configOptionsFor(ss.Controls())
	ss.settingsChanged(false)
	return already, opts, nil
}

// setMultitaskOption is session/set_config_option for multitask (C50–C55).
func (s *Server) setMultitaskOption(ctx context.Context, ss *session, req *acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	var none acp.SetSessionConfigOptionResponse
	if err := s.checkOwner(ctx, ss); err != nil {
		return none, err
	}
	if why := s.multitaskRefusal(ss); why != "" {
		return none, acp.InvalidParams("Invalid params", why)
	}
	var on bool
	if v := string(req.Value); v != "true" && v != "false" || json.Unmarshal(req.Value, &on) != nil {
		return none, acp.InvalidParams("Invalid params", fmt.Sprintf(`multitask is a boolean option: value must be a JSON true or false (with "type": "boolean"), not %s`, orDefault(string(req.Value), "nothing")))
	}
	if req.Type != "" && req.Type != "boolean" {
		return none, acp.InvalidParams("Invalid params", fmt.Sprintf(`multitask is a boolean option: type must be "boolean", not %q`, req.Type))
	}
	_, opts, err := s.writeMultitask(ss, on)
	if err != nil {
		return none, rpcError(s, err)
	}
	return acp.SetSessionConfigOptionResponse{ConfigOptions: opts}, nil
}

// SetMultitask is CodeBuddy's session/set_multitask (C57–C62): the same
// resolution, validation and persistence as the standard write; business
// refusals answer ok: false, among them a session id this connection does
// not serve: a child (sub-agent or worker) session, or an unknown one.
// Malformed params stay -32602 (Validate).
func (s *Server) SetMultitask(ctx context.Context, req *acp.SetMultitaskRequest) (acp.SetMultitaskResponse, error) {
	var none acp.SetMultitaskResponse
	ss, err := s.lookup(req.SessionID)
	if err != nil {
		return acp.SetMultitaskResponse{OK: false, AgentName: "corvid", Message: s.notServed(req.SessionID)}, nil
	}
	if err := s.checkOwner(ctx, ss); err != nil {
		return none, err
	}
	want, err := req.Want()
	if err != nil {
		return none, err
	}
	c := ss.Controls()
	name := "corvid"
	if c.Agent != nil {
		name = c.Agent.Name
	}
	if why := s.multitaskRefusal(ss); why != "" {
		return acp.SetMultitaskResponse{OK: false, On: c.Multitask, AgentName: name, Message: why}, nil
	}
	on := !c.Multitask
	if want != nil {
		on = *want
	}
	already, _, err := s.writeMultitask(ss, on)
	if err != nil {
		return none, rpcError(s, err)
	}
	msg := "multitask is now " + onOff(on)
	if already {
		msg = "multitask is already " + onOff(on)
	}
	return acp.SetMultitaskResponse{OK: true, On: on, Already: already, AgentName: name, Message: msg}, nil
}

// notServed says why session id, which this connection does not serve,
// cannot have multitask: it is a child session of one it serves, or unknown.
func (s *Server) notServed(id string) string {
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		if ss.Session != nil {
			all = append(all, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range all {
		if ss.HasChildSession(id) {
			return "session " + id + " is a worker or child session of " + ss.id + ": multitask is set on " + ss.id + ", the session it belongs to"
		}
	}
	return "Unknown session: no session " + id + " on this connection; create it with session/new or session/load"
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
