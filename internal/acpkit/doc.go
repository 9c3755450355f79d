// Package acpkit is the client side of the Agent Client Protocol (ACP v1) shared by corvid's
// fake editor (internal/testkit) and the conformance command (internal/conformance): the one
// embedded copy of the official schema with its validator and method tables, the JSON-RPC
// message decoder and error codes, the agent process helper, and a typed builder for
// scripted-model files.
//
//   - [LoadSchema] compiles the embedded schema once; [Schema.Validate] checks a JSON value
//     against one of its $defs, and [Schema.Def] names the $defs type of a method's params or
//     result in a [Role], read from the schema's x-method/x-side annotations so the tables
//     cannot drift from it.
//   - [Decode] parses one NDJSON line into a [Message] and says what, if anything, is wrong
//     with its JSON-RPC 2.0 envelope.
//   - [Spawn] starts an agent in its own process group on real pipes; [Proc.Kill] ends the
//     whole group.
//   - [NewScript], [Reply], [Text], [Thinking] and [ToolCall] build the files corvid plays with
//     `-m script:FILE` (docs/script-format.md).
//
// The package links only the standard library, internal/jsonschema (no init-time work; see
// its package comment) and internal/llm/script's types, so the corvid binary can carry it.
package acpkit
