// Package conformance checks any agent that serves the Agent Client Protocol
// (ACP v1) on stdio against the spec, requirement by requirement:
// `corvid conformance -- <agent command>`.
//
// Start with [Run] and the [Requirements] catalogue (requirement.go). Each
// check (checks.go) starts the agent afresh — its own process group, a
// temporary HOME, XDG dirs and cwd, a minimal environment — plays a client
// that advertises no capabilities, and reports PASS, FAIL or SKIPPED for the
// requirements it covers. Every line the agent writes is also judged by the
// observer (observe.go): stdio hygiene, envelope shape and the embedded ACP v1
// JSON Schema, whatever check was running.
//
// Tiers: MANDATORY is a spec MUST, CAPABILITY must work when advertised,
// ADVISORY is a SHOULD, INFORMATIONAL is where the spec is silent. A run is
// OK when no MANDATORY or advertised CAPABILITY requirement fails.
//
// Checks that need a model turn are SKIPPED when the agent reports missing
// credentials (-32000 or an auth error). With Options.Scripted the runner
// drives corvid's scripted model (`-m script:FILE`, docs/script-format.md)
// instead, so every check runs offline.
package conformance
