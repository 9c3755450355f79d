package config

// kage (a coding agent served over ACP, docs/kage.md) names its session
// config options and their values differently; a kage client replays the
// values it stored. OptionAlias maps them onto corvid's, so
// session/set_config_option accepts both, while configOptions keep
// showing corvid's own.

// optionIDAliases are kage's config option ids that differ from corvid's.
var optionIDAliases = map[string]string{"thinking": "thought_level"}

// optionValueAliases maps, per corvid option id, kage's values onto
// corvid's. Values corvid has under the same name map to themselves.
var optionValueAliases = map[string]map[string]string{
	"thought_level": {
		// kage: "default (high, or the nearest level the model accepts)".
		"default": "high",
		"off":     "off",
		// kage's smallest effort that still thinks; corvid's smallest is low.
		"minimal": "low",
		"low":     "low",
		"medium":  "medium",
		"high":    "high",
		// kage's level above high; corvid's is max.
		"xhigh": "max",
	},
	"mode": {
		// kage: the configured rules decide; so does corvid's default.
		"default": "default",
		// kage: asks before every tool call.
		"ask": "ask",
		// kage: runs every call without asking (configured denies still
		// refuse); corvid's yolo.
		"allow": "yolo",
		// kage: refuses every call; corvid's deny mode, added for it.
		"deny": "deny",
	},
}

// OptionAlias returns corvid's config option id and value for id and
// value as a kage client may send them ("thinking"/"xhigh" →
// "thought_level"/"max", "mode"/"allow" → "mode"/"yolo"). Anything else
// comes back unchanged, so corvid's own ids and values pass through.
func OptionAlias(id, value string) (string, string) {
	if to, ok := optionIDAliases[id]; ok {
		id = to
	}
	if to, ok := optionValueAliases[id][value]; ok {
		value = to
	}
	return id, value
}

// ModeAlias is corvid's permission mode for m, which may be one of kage's
// (allow → yolo); see OptionAlias.
func ModeAlias(m string) string {
	_, v := OptionAlias("mode", m)
	return v
}
