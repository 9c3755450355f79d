package main

import (
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/profile"
)

// profileModel picks profile p's model the way Leviath picks a stage's from
// its ordered list: the first entry corvid can use here (a scripted model, a
// provider with credentials, or a keyless local server the config names).
// When none can be used, p.ModelFallback (Leviath's allow_user_default)
// leaves the choice to the launch default ("", with a warning saying so);
// without it the first entry stands, and fails as any model without
// credentials does. A corvid profile's one model always stands.
func profileModel(env config.Env, file *config.File, p *profile.Profile) (id, warning string) {
	if len(p.Models) == 0 {
		return "", ""
	}
	var skipped []string
	for _, m := range p.Models {
		why := modelUnavailable(env, file, m)
		if why == "" {
			return m, ""
		}
		skipped = append(skipped, m+" ("+why+")")
	}
	if !p.ModelFallback {
		return p.Models[0], ""
	}
	return "", fmt.Sprintf("none of its models can be used here: %s; corvid uses the launch model instead", strings.Join(skipped, ", "))
}

// modelUnavailable says why corvid cannot use the model id here ("" when
// it can).
func modelUnavailable(env config.Env, file *config.File, id string) string {
	name, _, err := config.ParseModel(file, id)
	if err != nil {
		return err.Error()
	}
	if name == config.ScriptProvider {
		return ""
	}
	prov, ok := file.Provider(name)
	if !ok {
		return "unknown provider"
	}
	if !prov.NeedsKey {
		_, configured := file.Providers[name]
		_, custom := file.Custom[name]
		if configured || custom {
			return ""
		}
		return "a local server, used only when config.toml names it"
	}
	if _, src := config.Credential(env, prov); src == "" {
		return "no credentials"
	}
	return ""
}
