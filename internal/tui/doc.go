// Package tui is corvid's terminal UI: an ACP client, like an editor.
//
// It reaches the agent only through ACP v1 over a pipe: it runs `corvid
// acp` (or any agent command) as a child process and speaks JSON-RPC to it
// with internal/acp's connection and wire types. It never imports the agent
// core (internal/deps_test.go checks), so everything the terminal shows is
// what an editor could show, and the protocol stays the one contract.
//
// The UI is inline, not an alternate screen: finished output (messages,
// tool cards, the final plan) is printed once into the terminal's own
// scrollback; only the live part (the line being streamed, running tool
// cards, a permission question, the input and the status line) is redrawn.
//
// Markdown is rendered by a small line-based renderer of its own on
// lipgloss (markdown.go): glamour's dependency chroma registers its lexers
// and styles at package init, ~24 ms and 5.7 MB on every start of every
// corvid command, `corvid acp` included (ARCHITECTURE.md §6).
package tui
