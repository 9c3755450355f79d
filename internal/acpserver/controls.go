package acpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/config"
)

// Config option ids.
const (
	optMode          = "mode"
	optModel         = "model"
	optThoughtLevel  = "thought_level"
	optContextWindow = "context_window"
)

// configOptions is the session's complete option set, in priority order.
func configOptions(c agent.Controls) []acp.SessionConfigOption {
	opts := []acp.SessionConfigOption{}
	models := make([]acp.ConfigSelectValue, 0, len(c.Models))
	for _, m := range c.Models {
		models = append(models, acp.ConfigSelectValue{Value: m.ID, Name: orDefault(m.Name, m.ID), Description: m.Description})
	}
	opts = append(opts, acp.SessionConfigOption{ID: optModel, Name: "Model", Category: "model", Type: "select", CurrentValue: c.Model, Options: models})
	modes := make([]acp.ConfigSelectValue, 0, len(agent.Modes))
	for _, m := range agent.Modes {
		modes = append(modes, acp.ConfigSelectValue{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	opts = append(opts, acp.SessionConfigOption{ID: optMode, Name: "Mode", Category: "mode", Type: "select", CurrentValue: c.Mode, Options: modes})
	if c.Reasoning {
		levels := []acp.ConfigSelectValue{}
		for _, l := range agent.ThoughtLevels() {
			levels = append(levels, acp.ConfigSelectValue{Value: l[0], Name: l[1]})
		}
		opts = append(opts, acp.SessionConfigOption{ID: optThoughtLevel, Name: "Thinking", Category: "thought_level", Type: "select", CurrentValue: orDefault(c.ThoughtLevel, "off"), Options: levels})
	}
	if len(c.Tiers) >= 2 {
		tiers := []acp.ConfigSelectValue{}
		for _, t := range c.Tiers {
			tiers = append(tiers, acp.ConfigSelectValue{Value: fmt.Sprint(t), Name: tokensName(t)})
		}
		opts = append(opts, acp.SessionConfigOption{ID: optContextWindow, Name: "Context window", Category: "model_config", Type: "select", CurrentValue: fmt.Sprint(c.ContextWindow), Options: tiers})
	}
	opts = append(opts, codeModeOption(c))
	return opts
}

func tokensName(n int64) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM tokens", n/1_000_000)
	case n >= 1000:
		return fmt.Sprintf("%dK tokens", n/1000)
	}
	return fmt.Sprintf("%d tokens", n)
}

func modeState(c agent.Controls) *acp.SessionModeState {
	st := &acp.SessionModeState{CurrentModeID: c.Mode}
	for _, m := range agent.Modes {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{ID: m.ID, Name: m.Name, Description: m.Description})
	}
	return st
}

// SetConfigOption changes one session config option and answers with the
// whole new set.
func (s *Server) SetConfigOption(ctx context.Context, req *acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	var none acp.SetSessionConfigOptionResponse
	ss, err := s.lookup(req.SessionID)
	if err != nil {
		return none, err
	}
	if req.ConfigID == optMultitask {
		return s.setMultitaskOption(ctx, ss, req)
	}
	if req.Type == "boolean" {
		return none, acp.InvalidParams("Unknown config option", fmt.Sprintf("%q is not a boolean option of this session", req.ConfigID))
	}
	var value string
	if err := json.Unmarshal(req.Value, &value); err != nil {
		return none, acp.InvalidParams("Invalid config value", fmt.Sprintf("the value of %q must be a string value id", req.ConfigID))
	}
	req.ConfigID, value = config.OptionAlias(req.ConfigID, value) // kage's ids and values (docs/kage.md)
	before := ss.Controls()
	switch req.ConfigID {
	case optMode:
		err = ss.SetMode(value)
	case optModel:
		err = ss.SetModel(value)
	case optThoughtLevel:
		if !before.Reasoning {
			return none, acp.InvalidParams("Unknown config option", "thought_level is offered only for models that reason")
		}
		err = ss.SetThoughtLevel(value)
	case optContextWindow:
		if len(before.Tiers) < 2 {
			return none, acp.InvalidParams("Unknown config option", "context_window is offered only for models with several context tiers")
		}
		err = ss.SetContextWindow(value)
	case optCodeMode:
		if err := s.checkOwner(ctx, ss); err != nil { // C86: as multitask's C56
			return none, err
		}
		err = ss.SetCodeMode(value)
	default:
		return none, acp.InvalidParams("Unknown config option", fmt.Sprintf("no option %q; options: %s", req.ConfigID, optionIDs(s.configOptionsFor(before))))
	}
	if err != nil {
		return none, err
	}
	after := ss.Controls()
	ss.settingsChanged(after.Mode != before.Mode)
	return acp.SetSessionConfigOptionResponse{ConfigOptions: s.configOptionsFor(after)}, nil
}

// SetMode switches the session's permission mode.
func (s *Server) SetMode(_ context.Context, req *acp.SetSessionModeRequest) (struct{}, error) {
	ss, err := s.lookup(req.SessionID)
	if err != nil {
		return struct{}{}, err
	}
	before := ss.Controls()
	if err := ss.SetMode(req.ModeID); err != nil {
		return struct{}{}, err
	}
	after := ss.Controls()
	if after.Mode != before.Mode {
		ss.settingsChanged(true)
	}
	return struct{}{}, nil
}

func optionIDs(opts []acp.SessionConfigOption) string {
	ids := make([]string, len(opts))
	for i, o := range opts {
		ids[i] = o.ID
	}
	return strings.Join(ids, ", ")
}

// settingsChanged tells every connection that holds the session
// (attach.go) that its settings changed, since they are the session's: the
// mode when it changed, then the option set, as each connection's dialect
// offers it, at one place among the session's updates, the same for every
// connection (agent.Session.ShowAll). A connection whose load answer is
// still to come is not told: the answer carries them.
func (ss *session) settingsChanged(mode bool) {
	if mode {
		ss.ShowAll(agent.Event{Kind: agent.EventMode, ModeID: ss.Controls().Mode})
		return
	}
	ss.ShowAll(agent.Event{Kind: agent.EventConfig})
}

// notify sends one session/update for this session.
func (ss *session) notify(update any) {
	_ = ss.srv.conn.Notify("session/update", acp.SessionNotification{SessionID: ss.id, Update: update})
}

// started runs right after the new/load response: the command list, then
// anything the user must hear about the start (an MCP server that failed).
// Nothing is pushed to a client that already closed its input (a piped
// handshake: nobody will show a menu).
func (ss *session) started() {
	ss.ready.Store(true)
	ss.srv.opts.Hub.changed() // created, loaded or attached: the list says so
	select {
	case <-ss.srv.conn.Gone():
		return
	default:
	}
	ss.notify(commandsUpdate(ss.Commands()))
	for _, n := range ss.TakeNotices() {
		if title, detail, _ := strings.Cut(strings.TrimSpace(n), "\n"); ss.ShowsNotices() && title != "" {
			ss.notify(acp.NoticeUpdate{SessionUpdate: "notice", Severity: "warning", Title: title, Description: strings.TrimSpace(detail)})
		} else {
			ss.Notify("[corvid] " + n)
		}
	}
}

func commandsUpdate(cmds []agent.CommandInfo) acp.AvailableCommandsUpdate {
	u := acp.AvailableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: []acp.AvailableCommand{}}
	for _, c := range cmds {
		ac := acp.AvailableCommand{Name: c.Name, Description: orDefault(c.Description, c.Name)}
		if c.Hint != "" {
			ac.Input = &acp.CommandInput{Hint: c.Hint}
		}
		u.AvailableCommands = append(u.AvailableCommands, ac)
	}
	return u
}

// sessionMeta is the _meta of a session/new, load, resume or fork response:
// the session's agent profile, when it has one.
func sessionMeta(c agent.Controls) acp.Meta {
	if c.Agent == nil {
		return nil
	}
	return acp.Meta{"corvid.dev/agent": map[string]any{"name": c.Agent.Name, "maxDepth": c.Agent.MaxDepth}}
}
