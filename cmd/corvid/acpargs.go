package main

import (
	"strconv"
	"strings"
)

// parseACPArgs reads the command lines editors launch corvid with (`corvid
// acp -m PROVIDER:MODEL --compat codebuddy` and the like) into an acpCmd
// without kong. Before it parses anything, kong builds its model of the
// command: every struct tag parsed, every help string interpolated through
// a regexp. For `corvid acp -m X` that was 3.0 of the 7.2 million
// instructions corvid ran from exec to the end of its initialize answer
// (valgrind --tool=callgrind), the largest share of its own start-up.
//
// It accepts only what it reads exactly as kong does: the acp command word
// or an alias first, then long flags with their value as --name=V or
// --name V, -m V, and the boolean flags bare. Anything else — help,
// --version, "--", a word that is not a flag, an unknown or repeated flag,
// a value that is empty or starts with "-", a number not written plainly,
// an enum value outside its set — returns ok false and kong parses the
// line, so help, errors and every other form stay kong's own.
// TestACPArgsParseLikeKong holds the two parsers to the same result.
func parseACPArgs(args []string) (c *acpCmd, ok bool) {
	if len(args) == 0 || (args[0] != "acp" && args[0] != "rpc" && args[0] != "agent-client") {
		return nil, false
	}
	// The defaults are the `default:` tags of acpCmd.
	c = &acpCmd{LogLevel: "info", MaxLineBytes: 67108864}
	seen := make(map[string]bool, len(args))
	for i := 1; i < len(args); i++ {
		a := args[i]
		var name, value string
		hasValue := false
		switch {
		case a == "-m":
			name = "model"
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name = a[2:]
			if k := strings.IndexByte(name, '='); k >= 0 {
				name, value, hasValue = name[:k], name[k+1:], true
			}
		default:
			return nil, false
		}
		if seen[name] && name != "allow" {
			return nil, false
		}
		seen[name] = true
		if b := c.boolFlag(name); b != nil {
			if hasValue {
				return nil, false
			}
			*b = true
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, false
			}
			i++
			value = args[i]
		}
		if value == "" || value[0] == '-' || !c.setFlag(name, value) {
			return nil, false
		}
	}
	return c, true
}

// boolFlag is the field of the boolean flag called name, or nil.
func (c *acpCmd) boolFlag(name string) *bool {
	switch name {
	case "yolo":
		return &c.Yolo
	case "sandbox-network":
		return &c.SandboxNetwork
	case "no-project-instructions":
		return &c.NoProjectInstructions
	case "login":
		return &c.Login
	case "multitask":
		return &c.Multitask
	case "no-seed-commands":
		return &c.Profile.NoSeedCommands
	}
	return nil
}

// setFlag stores value (non-empty) in the flag called name; false when
// there is no such flag taking a value or kong would refuse or read value
// otherwise.
func (c *acpCmd) setFlag(name, value string) bool {
	switch name {
	case "model":
		c.Model = value
	case "system":
		c.System = value
	case "log-file":
		c.LogFile = value
	case "store":
		c.StoreFlag.Store = value
	case "connect":
		c.Connect = value
	case "connect-token-file":
		c.ConnectTokenFile = value
	case "log-level":
		c.LogLevel = value
	case "mode":
		c.Mode = value
	case "sandbox":
		c.Sandbox = value
	case "allow":
		c.Allow = append(c.Allow, value)
	case "max-line-bytes":
		return plainInt(value, &c.MaxLineBytes)
	case "client-tools":
		if value != "auto" && value != "never" {
			return false
		}
		c.ClientTools = value
	case "compat":
		if value != "codebuddy" {
			return false
		}
		c.Compat = value
	case "agent":
		c.Profile.Agent = value
	case "max-depth":
		var n int
		if !plainInt(value, &n) {
			return false
		}
		c.Profile.MaxDepth = &n
	case "output-format":
		c.Profile.OutputFormat = value
	case "output-instructions":
		c.Profile.OutputInstructions = value
	default:
		return false
	}
	return true
}

// plainInt reads a decimal number without sign, leading zero or
// underscore: kong reads numbers with strconv.ParseInt(v, 0, 64), which
// would take 010 as octal, and for plain decimal digits the two agree.
func plainInt(v string, dst *int) bool {
	if v != "0" && (v[0] < '1' || v[0] > '9') {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return false
	}
	*dst = n
	return true
}
