package acpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/corvid-agent/corvid/internal/acp"
)

// Protocol is the agent side of ACP v1 as corvid serves it: one method per
// client→agent method, each taking its params already decoded and
// validated (acp's Validate methods). Server implements it; the dispatcher
// below is the only caller. A method of the schema that corvid does not
// serve is listed in unimplemented instead, so every method has one home.
//
// A request method returns its response, or acp.Then (a response with work
// to do right after it is written) or acp.Deferred (the rest runs
// concurrently with later requests; used where a request may take seconds).
type Protocol interface {
	Initialize(context.Context, *acp.InitializeRequest) (acp.InitializeResponse, error)
	Authenticate(context.Context, *acp.AuthenticateRequest) (acp.AuthenticateResponse, error)
	Logout(context.Context, *acp.LogoutRequest) (struct{}, error)

	NewSession(context.Context, *acp.NewSessionRequest) (any, error)
	LoadSession(context.Context, *acp.LoadSessionRequest) (any, error)
	ResumeSession(context.Context, *acp.LoadSessionRequest) (any, error)
	ForkSession(context.Context, *acp.LoadSessionRequest) (any, error)
	ListSessions(context.Context, *acp.ListSessionsRequest) (acp.ListSessionsResponse, error)
	CloseSession(context.Context, *acp.SessionIDRequest) (struct{}, error)
	DeleteSession(context.Context, *acp.SessionIDRequest) (struct{}, error)

	Prompt(context.Context, *PromptParams) (any, error)
	SetMode(context.Context, *acp.SetSessionModeRequest) (struct{}, error)
	SetConfigOption(context.Context, *acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error)

	// CodeBuddy's dialect methods (codebuddy.go), not in the ACP schema.
	SetAgent(context.Context, *acp.SetSessionAgentRequest) (acp.SetSessionAgentResponse, error)
	SetMultitask(context.Context, *acp.SetMultitaskRequest) (acp.SetMultitaskResponse, error)

	// Cancel is a notification: it has no answer, and params that do not
	// name a session are ignored.
	Cancel(context.Context, *acp.SessionIDRequest)
}

var _ Protocol = (*Server)(nil)

// route is how one request method reaches Protocol.
type route struct {
	// stored: served only when sessions persist (Options.Stored);
	// otherwise the method is not found.
	stored bool
	call   func(p Protocol, ctx context.Context, params json.RawMessage) (any, error)
}

// requests routes every client→agent request corvid serves.
var requests = map[string]route{
	"initialize":                {call: request(Protocol.Initialize)},
	"authenticate":              {call: request(Protocol.Authenticate)},
	"logout":                    {call: request(Protocol.Logout)},
	"session/new":               {call: request(Protocol.NewSession)},
	"session/prompt":            {call: request(Protocol.Prompt)},
	"session/close":             {call: request(Protocol.CloseSession)},
	"session/set_mode":          {call: request(Protocol.SetMode)},
	"session/set_config_option": {call: request(Protocol.SetConfigOption)},
	"session/load":              {stored: true, call: request(Protocol.LoadSession)},
	"session/resume":            {stored: true, call: request(Protocol.ResumeSession)},
	"session/list":              {stored: true, call: request(Protocol.ListSessions)},
	"session/delete":            {stored: true, call: request(Protocol.DeleteSession)},
	"session/fork":              {stored: true, call: request(Protocol.ForkSession)},
	// CodeBuddy's dialect, also under the "_" extension prefix its
	// clients' extMethod may add.
	"session/set_agent":      {call: request(Protocol.SetAgent)},
	"_session/set_agent":     {call: request(Protocol.SetAgent)},
	"session/set_multitask":  {call: request(Protocol.SetMultitask)},
	"_session/set_multitask": {call: request(Protocol.SetMultitask)},
}

// notifications routes every client→agent notification corvid acts on.
// Others, including Gas City's non-standard "initialized" and any
// "_"-prefixed extension, are ignored as the spec asks.
var notifications = map[string]func(p Protocol, ctx context.Context, params json.RawMessage){
	"session/cancel": notification(Protocol.Cancel),
}

// unimplemented lists the client→agent methods of the ACP schema (stable
// and unstable) that corvid does not serve. They are answered -32601 like
// any unknown method; the list exists so that a method added to the schema
// is either routed above or named here (TestEveryAgentMethodHasAHome).
var unimplemented = []string{
	"session/set_model", // superseded by session/set_config_option "model"
	"providers/list", "providers/set", "providers/disable",
	"mcp/message",
	"nes/start", "nes/suggest", "nes/accept", "nes/reject", "nes/close",
	"document/didOpen", "document/didChange", "document/didClose", "document/didSave", "document/didFocus",
}

// dispatchRequest decodes and validates params for method and calls p.
func dispatchRequest(ctx context.Context, p Protocol, stored bool, method string, params json.RawMessage) (any, error) {
	r, ok := requests[method]
	if !ok || r.stored && !stored {
		return nil, acp.MethodNotFound(method)
	}
	return r.call(p, ctx, params)
}

// dispatchNotification calls p for a notification it acts on.
func dispatchNotification(ctx context.Context, p Protocol, method string, params json.RawMessage) bool {
	n, ok := notifications[method]
	if ok {
		n(p, ctx, params)
	}
	return ok
}

// request adapts a typed Protocol method to raw params.
func request[P, R any](m func(Protocol, context.Context, *P) (R, error)) func(Protocol, context.Context, json.RawMessage) (any, error) {
	return func(p Protocol, ctx context.Context, raw json.RawMessage) (any, error) {
		params, err := decodeParams[P](raw)
		if err != nil {
			return nil, err
		}
		res, err := m(p, ctx, params)
		if err != nil {
			return nil, rpcError(p, err)
		}
		if d, ok := any(res).(acp.Deferred); ok {
			return acp.Deferred(func() (any, error) {
				res, err := d()
				return res, rpcError(p, err)
			}), nil
		}
		return res, nil
	}
}

// notification adapts a typed notification method; params that do not
// decode or validate are dropped (a notification has no answer).
func notification[P any](m func(Protocol, context.Context, *P)) func(Protocol, context.Context, json.RawMessage) {
	return func(p Protocol, ctx context.Context, raw json.RawMessage) {
		if params, err := decodeParams[P](raw); err == nil {
			m(p, ctx, params)
		}
	}
}

// decodeParams unmarshals params, mapping failure to -32602 with details,
// and runs the type's Validate. Absent params decode as an empty object.
func decodeParams[P any](raw json.RawMessage) (*P, error) {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	p := new(P)
	if c, ok := any(p).(interface{ checkRaw(json.RawMessage) error }); ok {
		// Bounds checked before decoding (promptlimits.go).
		if err := c.checkRaw(raw); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal(raw, p); err != nil {
		return nil, acp.InvalidParams("Invalid params", paramsProblem(err))
	}
	if v, ok := any(p).(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// paramsProblem says what is wrong with params in the protocol's terms,
// without Go type names.
func paramsProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return "params must be a JSON object"
		}
		return fmt.Sprintf("%s must not be a JSON %s", te.Field, te.Value)
	}
	return "params are not valid for this method"
}
