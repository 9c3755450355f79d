package conformance

import (
	"sync"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// check is one scenario against fresh agent processes. It reports the listed
// requirements; any it leaves undecided fail.
type check struct {
	name   string
	area   string
	script string // scripted model to play (with Options.Scripted), also picks the prompt text
	reqs   []string
	run    func(*checkRun)
}

var checks = []check{
	{"stdio", AreaStdio, "hello", []string{"stdio.exit-on-eof"}, checkStdio},
	{"envelope", AreaEnvelope, "hello", []string{"envelope.id-int", "envelope.id-string", "envelope.id-int64",
		"envelope.no-response-to-notification", "envelope.parse-error", "envelope.invalid-request",
		"envelope.method-not-found", "envelope.ext-method-not-found", "envelope.invalid-params",
		"envelope.usable-after-error"}, checkEnvelope},
	{"initialize-negotiation", AreaInitialize, "hello", []string{"initialize.version-negotiation"}, checkNegotiation},
	{"initialize", AreaInitialize, "hello", []string{"initialize.version-1", "initialize.agent-info",
		"initialize.capabilities", "initialize.auth-methods", "initialize.authenticate-unknown",
		"initialize.logout"}, checkInitialize},
	{"sessions-new", AreaSessions, "hello", []string{"sessions.new-distinct", "sessions.relative-cwd",
		"sessions.additional-directories"}, checkSessionsNew},
	{"sessions-manage", AreaSessions, "hello", []string{"sessions.list", "sessions.close", "sessions.delete",
		"sessions.fork"}, checkSessionsManage},
	{"sessions-load", AreaSessions, "hello", []string{"sessions.load", "sessions.resume"}, checkSessionsLoad},
	{"prompt", AreaPrompt, "hello", []string{"prompt.stop-reason", "prompt.updates-before-response"}, checkPrompt},
	{"prompt-cancel", AreaPrompt, "slow", []string{"prompt.cancel"}, checkCancel},
	{"prompt-cancel-race", AreaPrompt, "race", []string{"prompt.cancel-race"}, checkCancelRace},
	{"prompt-concurrent", AreaPrompt, "medium", []string{"prompt.concurrent"}, checkConcurrent},
	{"content", AreaContent, "hello", []string{"content.resource-link", "content.image", "content.audio",
		"content.embedded-resource"}, checkContent},
	{"config", AreaConfig, "hello", []string{"config.modes", "config.options", "config.unknown-option"}, checkConfig},
	{"client-capabilities", AreaClientCaps, "tools", []string{"client-capabilities.none-used",
		"client-capabilities.tools-in-process"}, checkClientCaps},
	{"extensibility", AreaExtensions, "hello", []string{"extensibility.meta-accepted",
		"extensibility.unknown-notification"}, checkExtensibility},
}

// scripts are corvid scripted-model files (docs/script-format.md), written into
// a check's workspace when Options.Scripted is set. Built on first use: the
// corvid binary links this package for `corvid conformance`, and package
// initialisation runs on every start.
var scripts = sync.OnceValue(func() map[string]*acpkit.Script {
	return map[string]*acpkit.Script{
		"hello": acpkit.NewScript(acpkit.Reply(acpkit.Text("pong"))).OnExhausted("repeat-last"),
		"slow": acpkit.NewScript(acpkit.Reply(
			acpkit.Repeat("This answer streams slowly so that the client can cancel it. ", 40),
		)).Stream(4, 20).OnExhausted("repeat-last"),
		"medium": acpkit.NewScript(acpkit.Reply(
			acpkit.Repeat("A short streamed answer. ", 16),
		)).Stream(16, 10).OnExhausted("repeat-last"),
		"race": acpkit.NewScript(acpkit.Reply(acpkit.Text("done now."))).Stream(4, 0).OnExhausted("repeat-last"),
		"tools": acpkit.NewScript(
			acpkit.Reply(acpkit.ToolCall("read", map[string]any{"path": "input.txt"})),
			acpkit.Reply(acpkit.ToolCall("write", map[string]any{"path": "out.txt", "content": "conformance input\n"})),
			acpkit.Reply(acpkit.ToolCall("shell", map[string]any{"command": "echo conformance > shell.txt"})),
			acpkit.Reply(acpkit.Text("Read, wrote and ran.")),
		).OnExhausted("repeat-last"),
	}
})
