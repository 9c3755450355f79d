package main

import (
	"fmt"

	"github.com/corvid-agent/corvid/internal/acpserver"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/profile"
)

// userInfo is authenticate's identity from [identity] (nil: none).
func userInfo(id config.Identity) *acpserver.UserInfo {
	if id == (config.Identity{}) {
		return nil
	}
	return &acpserver.UserInfo{UserID: id.UserID, UserName: id.UserName, UserNickname: id.UserNickname}
}

// switchProfile resolves session/set_agent's profile by name (never a
// path: a host names a profile the user installed) from the profile
// folders, as --agent does.
func (c *acpCmd) switchProfile(env config.Env, file *config.File) func(name, cwd string) (agent.ProfileSwitch, error) {
	return func(name, cwd string) (agent.ProfileSwitch, error) {
		if profile.IsPath(name) {
			return agent.ProfileSwitch{}, fmt.Errorf("agent %q: session/set_agent takes a profile name, not a path", name)
		}
		f, err := c.loadConfig(env, cwd)
		if err != nil {
			f = file
		}
		p, err := profile.Resolve(env, f, name)
		if err != nil {
			return agent.ProfileSwitch{}, err
		}
		model, _ := profileModel(env, f, p)
		return agent.ProfileSwitch{
			Info:    *c.Profile.profileInfo(p),
			System:  p.System,
			Context: func(ss agent.SessionStart) string { return p.Context(spawn(ss, c.Profile.NoSeedCommands)) },
			Model:   model,
		}, nil
	}
}

// launchAgent is the --agent profile's name ("" without one).
func (c *acpCmd) launchAgent() string {
	if c.Profile.launch == nil {
		return ""
	}
	return c.Profile.launch.Name
}
