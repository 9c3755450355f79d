// Package testkit is corvid's fake editor: an ACP v1 client that drives the built corvid
// binary over pipes in end-to-end tests, the way gopls's integration tests drive gopls.
//
// Start with [BuildCorvid] (the binary, built once per test process) and [Start] (spawn it
// with an isolated HOME and XDG dirs). The returned [Editor]:
//
//   - checks every line the agent writes to stdout: anything that is not a JSON-RPC 2.0
//     object fails the test, and every message is validated against the official ACP v1
//     JSON Schema (internal/acpkit, which holds the one committed copy) by method: agent→client
//     requests by their params type, notifications by theirs, and responses to the editor's
//     own requests by the response type of the method that was sent;
//   - answers the agent's requests (session/request_permission, fs/*, terminal/*,
//     elicitation/create) with configurable handlers, and fails the test when the agent
//     calls a method the editor did not advertise in its clientCapabilities;
//   - records everything: a transcript of both directions, notifications, session updates,
//     permission/fs/terminal calls; tests await updates with [Editor.WaitUpdate] instead of
//     sleeping.
//
// [Editor.Initialize] with a [Host] preset ([Zed], [Emacs], [OldGasCity], [NewGasCity],
// [GoSDK], [Minimal]) sends what that host really sends (ARCHITECTURE.md §8).
//
// Failures are reported with t.Errorf so one run shows every protocol defect; on failure
// the transcript and the agent's stderr are dumped by a t.Cleanup.
package testkit
