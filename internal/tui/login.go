package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/acp"
)

// authMethod is one login method an agent offers in its initialize
// answer: the schema's agent-run method, an environment variable
// (type "env_var", with the variables) or a command in a terminal (type
// "terminal", with its arguments and environment).
type authMethod struct {
	Type        string            `json:"type"`
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Args        []string          `json:"args"`
	Env         map[string]string `json:"env"`
	Vars        []struct {
		Name     string `json:"name"`
		Optional bool   `json:"optional"`
	} `json:"vars"`
}

// maxAuthMethods is how many login methods of an initialize answer are
// kept: an agent that lists thousands gets the first ones.
const maxAuthMethods = 64

// parseAuthMethods reads initialize's authMethods leniently: a method
// that does not decode, or has no id (authenticate could not name it), is
// left out rather than failing initialize; a list that is not a list is
// none.
func parseAuthMethods(raw json.RawMessage) []authMethod {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []authMethod
	for _, r := range list {
		var m authMethod
		if json.Unmarshal(r, &m) != nil || m.ID == "" {
			continue
		}
		out = append(out, m)
		if len(out) == maxAuthMethods {
			break
		}
	}
	return out
}

// displayText is text from the agent made fit for one row: its controls
// shown as escapes (a no-op for what came scrubbed already, scrub.go),
// then new lines and tabs as spaces.
func displayText(s string) string {
	return strings.NewReplacer("\n", " ", "\t", " ").Replace(scrubText(s))
}

// loginError says the agent wants a login before a session, and how.
type loginError struct {
	msg   string
	lines []string // one per login method
}

func (e *loginError) Error() string { return e.msg }

// sessionError says why no session opened; when the agent wants a login
// first (auth_required), it lists the agent's login methods as hints.
// what names the call that failed ("session/new").
func sessionError(what string, err error, methods []authMethod, agent []string) error {
	var e *acp.Error
	if !errors.As(err, &e) || e.Code != acp.CodeAuthRequired {
		return fmt.Errorf("%s: %s", what, rpcMessage(err))
	}
	le := &loginError{msg: fmt.Sprintf("the agent needs a login (%s)", rpcMessage(err))}
	if len(methods) == 0 {
		le.msg += "; it offers no login method: see its documentation"
		return le
	}
	le.msg += "; log in with one of:"
	for _, m := range methods {
		le.lines = append(le.lines, "• "+loginHow(m, agent))
	}
	return le
}

// loginHow is one login method in words: what to set or run.
func loginHow(m authMethod, agent []string) string {
	name := methodName(m)
	var how string
	switch m.Type {
	case "env_var":
		var vars []string
		for _, v := range m.Vars {
			if !v.Optional {
				vars = append(vars, displayText(v.Name))
			}
		}
		if len(vars) > 0 {
			how = "set " + strings.Join(vars, " and ") + " in the environment and start again"
		}
	case "terminal":
		if len(agent) > 0 {
			how = displayText("run "+strings.Join(append([]string{agent[0]}, m.Args...), " ")) + " in a terminal"
		}
	}
	if how == "" && m.Description != "" {
		how = displayText(m.Description)
	}
	if how == "" {
		return name
	}
	return name + ": " + how
}

// methodName is what a login method is called on the screen.
func methodName(m authMethod) string {
	if m.Name != "" {
		return displayText(m.Name)
	}
	return displayText(m.ID)
}
