package conformance

// Tier says how much a requirement weighs.
type Tier string

const (
	// Mandatory is a spec MUST (ACP or the JSON-RPC 2.0 it is built on).
	Mandatory Tier = "MANDATORY"
	// Capability must work if the agent advertised it; otherwise it is skipped.
	Capability Tier = "CAPABILITY"
	// Advisory is a spec SHOULD.
	Advisory Tier = "ADVISORY"
	// Informational is behaviour the spec is silent on, reported for comparison.
	Informational Tier = "INFORMATIONAL"
)

// Status is a requirement's outcome.
type Status string

const (
	Pass    Status = "PASS"
	Fail    Status = "FAIL"
	Skipped Status = "SKIPPED"
)

// Area names, usable with Options.Only.
const (
	AreaStdio      = "stdio"
	AreaEnvelope   = "envelope"
	AreaInitialize = "initialize"
	AreaSessions   = "sessions"
	AreaPrompt     = "prompt"
	AreaContent    = "content"
	AreaConfig     = "config"
	AreaClientCaps = "client-capabilities"
	AreaExtensions = "extensibility"
	AreaSchema     = "schema"
)

// Areas lists every area in report order.
var Areas = []string{AreaStdio, AreaEnvelope, AreaInitialize, AreaSessions, AreaPrompt,
	AreaContent, AreaConfig, AreaClientCaps, AreaExtensions, AreaSchema}

// Requirement is one checkable statement.
type Requirement struct {
	ID    string `json:"id"`
	Area  string `json:"area"`
	Tier  Tier   `json:"tier"`
	Title string `json:"title"`
}

// Requirements is the catalogue, in report order. Every ID is reported exactly once per run.
var Requirements = []Requirement{
	{"stdio.jsonrpc-lines", AreaStdio, Mandatory, "every stdout line is one JSON-RPC 2.0 object (no embedded newlines, nothing but protocol)"},
	{"stdio.utf8", AreaStdio, Mandatory, "every stdout line is valid UTF-8"},
	{"stdio.quiet-before-input", AreaStdio, Mandatory, "nothing is written to stdout before the first request"},
	{"stdio.exit-on-eof", AreaStdio, Advisory, "the agent exits within 2 s of stdin closing"},

	{"envelope.id-int", AreaEnvelope, Mandatory, "integer ids (0, 42) are echoed exactly"},
	{"envelope.id-string", AreaEnvelope, Mandatory, "string ids are echoed exactly"},
	{"envelope.id-int64", AreaEnvelope, Informational, "an id above 2^53 is echoed exactly (int64)"},
	{"envelope.result-xor-error", AreaEnvelope, Mandatory, "every response has exactly one of result and error"},
	{"envelope.no-response-to-notification", AreaEnvelope, Mandatory, "notifications (session/cancel, $/cancel_request, unknown) get no response"},
	{"envelope.parse-error", AreaEnvelope, Mandatory, "a line of bad JSON gets -32700 with id null"},
	{"envelope.invalid-request", AreaEnvelope, Mandatory, "an object that is not a valid request gets -32600"},
	{"envelope.method-not-found", AreaEnvelope, Mandatory, "an unknown method gets -32601"},
	{"envelope.ext-method-not-found", AreaEnvelope, Mandatory, "an unknown _-prefixed request gets -32601"},
	{"envelope.invalid-params", AreaEnvelope, Mandatory, "bad params (session/new with a numeric cwd) get -32602"},
	{"envelope.usable-after-error", AreaEnvelope, Mandatory, "the connection still answers after each error"},
	{"envelope.error-message-one-line", AreaEnvelope, Advisory, "error messages are one concise line"},

	{"initialize.version-negotiation", AreaInitialize, Mandatory, "protocolVersion 65535 is answered with the agent's own version, not an echo"},
	{"initialize.version-1", AreaInitialize, Mandatory, "protocolVersion 1 is answered with 1"},
	{"initialize.agent-info", AreaInitialize, Advisory, "agentInfo {name, version} is sent"},
	{"initialize.capabilities", AreaInitialize, Mandatory, "agentCapabilities are well-formed (schema)"},
	{"initialize.auth-methods", AreaInitialize, Mandatory, "authMethods are well-formed: schema, unique ids, no terminal method unless the client offered auth.terminal"},
	{"initialize.authenticate-unknown", AreaInitialize, Advisory, "authenticate with an unknown methodId is an error"},
	{"initialize.logout", AreaInitialize, Capability, "logout (if auth.logout is advertised) returns {}"},

	{"sessions.new-distinct", AreaSessions, Mandatory, "session/new returns distinct session ids"},
	{"sessions.relative-cwd", AreaSessions, Advisory, "session/new with a relative cwd is rejected"},
	{"sessions.additional-directories", AreaSessions, Capability, "session/new accepts additionalDirectories (if advertised)"},
	{"sessions.load", AreaSessions, Capability, "session/load (if loadSession) replays history before answering an object"},
	{"sessions.resume", AreaSessions, Capability, "session/resume (if advertised) answers an object and replays nothing"},
	{"sessions.list", AreaSessions, Capability, "session/list (if advertised) returns a sessions array"},
	{"sessions.close", AreaSessions, Capability, "session/close (if advertised) returns {}; a prompt to the closed session is an error"},
	{"sessions.delete", AreaSessions, Capability, "session/delete (if advertised) returns {}; the session leaves session/list"},
	{"sessions.fork", AreaSessions, Capability, "session/fork (unstable, if advertised) returns a new session id"},

	{"prompt.stop-reason", AreaPrompt, Mandatory, "a text prompt ends with a defined stop reason"},
	{"prompt.updates-before-response", AreaPrompt, Mandatory, "every session/update of a turn arrives before the prompt response"},
	{"prompt.cancel", AreaPrompt, Mandatory, "session/cancel mid-stream ends the turn with stopReason cancelled and no update after it"},
	{"prompt.cancel-race", AreaPrompt, Mandatory, "a cancel racing the end of a turn ends it with cancelled or end_turn, never an error or a hang"},
	{"prompt.concurrent", AreaPrompt, Advisory, "a second prompt during a turn is refused or queued, never silently cancels the first"},

	{"content.resource-link", AreaContent, Mandatory, "a resource_link prompt block is accepted (baseline)"},
	{"content.image", AreaContent, Capability, "an image prompt block is accepted (if promptCapabilities.image)"},
	{"content.audio", AreaContent, Capability, "an audio prompt block is accepted (if promptCapabilities.audio)"},
	{"content.embedded-resource", AreaContent, Capability, "an embedded resource prompt block is accepted (if promptCapabilities.embeddedContext)"},

	{"config.modes", AreaConfig, Capability, "modes, if returned, are well-formed and set_mode to an available mode succeeds"},
	{"config.options", AreaConfig, Capability, "configOptions, if returned, are well-formed; setting each option's first value succeeds and returns the full set"},
	{"config.unknown-option", AreaConfig, Capability, "set_config_option with an unknown configId is an error"},

	{"client-capabilities.none-used", AreaClientCaps, Mandatory, "with no client capabilities, no fs/*, terminal/* or elicitation/* request arrives during a turn that reads, writes and runs a command"},
	{"client-capabilities.tools-in-process", AreaClientCaps, Informational, "the agent did the reading, writing and command itself (files appeared in the workspace)"},

	{"extensibility.meta-accepted", AreaExtensions, Mandatory, "_meta is accepted on initialize, session/new and session/prompt params"},
	{"extensibility.unknown-notification", AreaExtensions, Advisory, "unknown notifications (_-prefixed and not) are ignored and the connection stays usable"},

	{"schema.messages", AreaSchema, Mandatory, "every message received validates against the ACP v1 schema"},
}

func requirementByID(id string) (Requirement, bool) {
	for _, r := range Requirements {
		if r.ID == id {
			return r, true
		}
	}
	return Requirement{}, false
}
