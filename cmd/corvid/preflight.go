package main

import (
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/catalog"
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/tool"
)

// preflight is what `corvid acp` checks of its configuration before it
// serves, in one place so that `corvid doctor` reports exactly the same:
// a problem stops acp (it exits 1 with the first), a warning is logged.
type preflight struct {
	model    llm.Model
	noModel  *noCredentials // the model that waits for a key (model is nil)
	perms    agent.Permissions
	sandbox  tool.Sandbox
	problems []preflightItem
	warnings []preflightItem
}

// preflightItem is one finding; area names the doctor's line ("model",
// "permissions", "sandbox", "config").
type preflightItem struct{ area, text string }

func (pf *preflight) problem(area string, err error) {
	pf.problems = append(pf.problems, preflightItem{area, err.Error()})
}

func (pf *preflight) warn(area, format string, args ...any) {
	pf.warnings = append(pf.warnings, preflightItem{area, fmt.Sprintf(format, args...)})
}

// preflight opens the model and reads the permissions and the sandbox of
// file with c's flags, as acp serves them, and collects every problem and
// warning (not only the first).
func (c *acpCmd) preflight(env config.Env, file *config.File) *preflight {
	pf := &preflight{}
	for _, ign := range file.Ignored {
		pf.warn("config", "project config setting ignored (run `corvid trust` in the project to apply it): %s", ign)
	}
	model, noModel, err := c.openModel(env, file)
	switch {
	case err != nil:
		pf.problem("model", err)
	case noModel != nil && noModel.model != "":
		pf.warn("model", "the configured model %s has no key (set %s or run `corvid auth login %s`); editors will be asked to authenticate",
			noModel.model, joinOr(noModel.provider.KeyVars), noModel.provider.Name)
	case noModel != nil:
		pf.warn("model", "none configured and no provider key to pick one; editors will be asked to authenticate")
	}
	pf.model, pf.noModel = model, noModel
	if w := catalogWarning(env, file, c.Model); w != "" {
		pf.warn("model", "%s", w)
	}
	perms, err := c.permissions(file)
	if err != nil {
		pf.problem("permissions", err)
	}
	pf.perms = perms
	for _, w := range unknownToolRules(perms) {
		pf.warn("permissions", "permission rule %s names no known tool; it will never match", w)
	}
	sb, err := c.sandbox(env, file)
	if err != nil {
		pf.problem("sandbox", err)
	}
	pf.sandbox = sb
	if why := sandboxUnavailable(sb); why != "" {
		pf.warn("sandbox", "%s", why)
	}
	return pf
}

// catalogWarning says when the model (-m, CORVID_MODEL or config) is not
// in corvid's catalog of a provider that has one, with the nearest id it
// has; "" otherwise.
func catalogWarning(env config.Env, file *config.File, flag string) string {
	provider, model, err := config.ResolveModel(env, file, flag)
	if err != nil || provider == config.ScriptProvider || catalog.Lookup(provider, model).Known {
		return ""
	}
	known := catalog.List(provider)
	if len(known) == 0 {
		return ""
	}
	ids := make([]string, len(known))
	for i, e := range known {
		ids[i] = e.ID
	}
	msg := fmt.Sprintf("model %s:%s is not in corvid's catalog", provider, model)
	if near := config.Nearest(model, ids); near != "" {
		return fmt.Sprintf("%s; did you mean %s:%s? (`corvid models` lists the known ones)", msg, provider, near)
	}
	return msg + "; if the first prompt fails, `corvid models` lists the known ones"
}

func joinOr(vars []string) string {
	if len(vars) == 0 {
		return "its key"
	}
	return strings.Join(vars, " or ")
}

// unknownToolRules lists the configured and --allow rules whose tool name
// matches no built-in tool (and cannot be an MCP tool): typos that would
// otherwise be silently ignored.
func unknownToolRules(p agent.Permissions) []string {
	known := []string{"task", "team"} // the agent's own (sub-agents)
	for _, t := range tool.Builtins() {
		known = append(known, tool.PermissionName(t))
	}
	var out []string
	check := func(list string, r permission.Rule) {
		if r.UnknownTool(known) {
			out = append(out, list+" "+r.String())
		}
	}
	if p.Rules != nil {
		for _, r := range p.Rules.Allow {
			check("allow", r)
		}
		for _, r := range p.Rules.Ask {
			check("ask", r)
		}
		for _, r := range p.Rules.Deny {
			check("deny", r)
		}
	}
	for _, a := range p.Allow {
		if r, err := permission.ParseRule(a); err == nil {
			check("--allow", r)
		}
	}
	return out
}
