// Package fastrelay runs `corvid acp --connect unix:PATH` (and `--connect
// auto` when a daemon already answers) while the program is still being
// initialised, before the packages the relay does not use run their
// initialisers, and exits. The relay is most of what an editor starts when
// a daemon runs (docs/serve.md), and issue 30 wants its spawn → initialize
// within 1.5× of a static program's.
//
// Go initialises packages in dependency order, the lowest import path
// first among those ready; this package imports only syscall and path,
// so it is initialised right after them (the fifteenth of some 130, after
// internal/stackstart), before time, os, crypto, net, net/http, SQLite's
// libc, YAML, Starlark and the rest, whose initialisers and page faults
// were most of the relay's start (bench/compare.sh, the relay section).
//
// It handles only the plain launch line: `corvid acp|rpc|agent-client
// --connect unix:PATH|auto` with no other argument, on Linux (it reads its
// arguments from /proc/self/cmdline; os.Args is os's, which is initialised
// later). Anything else, a socket that does not answer, or a standard
// stream in non-blocking mode, returns from init, and cmd/corvid's relay
// (relay.go) does the work as before, with its messages and auto-start.
// What it does is relay.go's relayUnix: the bytes both ways, unchanged;
// stdin's end half-closes the socket; the daemon's end ends the process
// with status 0.
package fastrelay

import "path"

// target is the socket of a launch line args (without the program name)
// that this package relays, and whether it does. getenv reads the
// environment (for auto: config.ServeSocket's rules).
func target(args []string, getenv func(string) string) (string, bool) {
	var connect string
	switch {
	case len(args) == 3 && args[1] == "--connect":
		connect = args[2]
	case len(args) == 2 && len(args[1]) > len("--connect=") && args[1][:len("--connect=")] == "--connect=":
		connect = args[1][len("--connect="):]
	default:
		return "", false
	}
	switch args[0] {
	case "acp", "rpc", "agent-client":
	default:
		return "", false
	}
	if connect == "auto" {
		p := serveSocket(getenv)
		return p, p != ""
	}
	if len(connect) > len("unix:") && connect[:len("unix:")] == "unix:" {
		return connect[len("unix:"):], true
	}
	return "", false
}

// serveSocket is config.ServeSocket where the environment decides it
// without the file system ("" elsewhere: relay.go then decides): serve.sock
// in $CORVID_HOME/run, else in $XDG_RUNTIME_DIR/corvid, else in the data
// directory's run/ ($XDG_DATA_HOME/corvid, else ~/.local/share/corvid).
// TestServeSocketIsConfigs keeps the two alike.
func serveSocket(getenv func(string) string) string {
	if h := getenv("CORVID_HOME"); h != "" {
		return path.Join(h, "run", "serve.sock")
	}
	if x := getenv("XDG_RUNTIME_DIR"); x != "" {
		return path.Join(x, "corvid", "serve.sock")
	}
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return path.Join(x, "corvid", "run", "serve.sock")
	}
	if h := getenv("HOME"); h != "" {
		return path.Join(h, ".local", "share", "corvid", "run", "serve.sock")
	}
	return ""
}
