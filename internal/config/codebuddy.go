package config

// Identity is the [identity] table of the user config: who the user is,
// as corvid tells hosts that ask (CodeBuddy's authenticate response,
// _meta["codebuddy.ai/userinfo"]). corvid has no account of its own, so
// these are whatever the user writes; empty means none is configured.
type Identity struct {
	UserID       string `toml:"user_id"`
	UserName     string `toml:"user_name"`
	UserNickname string `toml:"user_nickname"`
}

// BackgroundTasksDisabled reports whether CORVID_DISABLE_BACKGROUND_TASKS
// (or CodeBuddy's CODEBUDDY_CODE_DISABLE_BACKGROUND_TASKS) is set to
// anything but "", "0" or "false": then no session offers multitask.
func BackgroundTasksDisabled(env Env) bool {
	for _, k := range []string{"CORVID_DISABLE_BACKGROUND_TASKS", "CODEBUDDY_CODE_DISABLE_BACKGROUND_TASKS"} {
		switch env.Getenv(k) {
		case "", "0", "false":
		default:
			return true
		}
	}
	return false
}
