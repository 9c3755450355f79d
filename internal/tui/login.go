package tui

import (
	"errors"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/acp"
)

// authMethod is one login method an agent offers in its initialize
// answer: the schema's agent-run method, an environment variable
// (type "env_var", with the variables) or a command in a terminal (type
// "terminal", with its arguments).
type authMethod struct {
	Type        string   `json:"type"`
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Args        []string `json:"args"`
	Vars        []struct {
		Name     string `json:"name"`
		Optional bool   `json:"optional"`
	} `json:"vars"`
}

// loginError says the agent wants a login before a session, and how.
type loginError struct {
	msg   string
	lines []string // one per login method
}

func (e *loginError) Error() string { return e.msg }

// sessionError says why no session opened; when the agent wants a login
// first (auth_required), it lists the agent's login methods as hints.
func sessionError(err error, methods []authMethod, agent []string) error {
	var e *acp.Error
	if !errors.As(err, &e) || e.Code != acp.CodeAuthRequired {
		return fmt.Errorf("session/new: %s", rpcMessage(err))
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
	name := m.Name
	if name == "" {
		name = m.ID
	}
	var how string
	switch m.Type {
	case "env_var":
		var vars []string
		for _, v := range m.Vars {
			if !v.Optional {
				vars = append(vars, v.Name)
			}
		}
		if len(vars) > 0 {
			how = "set " + strings.Join(vars, " and ") + " in the environment and start again"
		}
	case "terminal":
		if len(agent) > 0 {
			how = "run " + strings.Join(append([]string{agent[0]}, m.Args...), " ") + " in a terminal"
		}
	}
	if how == "" && m.Description != "" {
		how = m.Description
	}
	if how == "" {
		return name
	}
	return name + ": " + how
}
