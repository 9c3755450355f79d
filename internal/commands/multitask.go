package commands

import (
	"fmt"
	"strings"
)

// runMultitask is /multitask [on|off]: the same stamp as the multitask
// config option and CodeBuddy's session/set_multitask.
func runMultitask(h Host, args string) (string, error) {
	var want *bool
	switch a := strings.ToLower(strings.TrimSpace(args)); a {
	case "":
	case "on", "true", "enable", "enter":
		t := true
		want = &t
	case "off", "false", "disable", "exit":
		f := false
		want = &f
	default:
		h.Say(fmt.Sprintf("/multitask takes on, off or nothing (toggle), not %q.", a))
		return "", nil
	}
	on, already, refused := h.SetMultitask(want)
	switch {
	case refused != "":
		h.Say("Multitask is unavailable: " + refused)
	case already:
		h.Say(fmt.Sprintf("Multitask is already %s.", onOff(on)))
	default:
		h.Say(fmt.Sprintf("Multitask is now %s.", onOff(on)))
	}
	return "", nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
