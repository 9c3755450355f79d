//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
)

// execTUI runs corvid-tui on this terminal and exits with its status.
func execTUI(path string, args []string) error {
	return runAndExit(path, args, nil, os.Stdout)
}

// handOff runs the program path with args and env on corvid's stdio (the
// stdout claimStdout kept for the protocol, if it did) and exits with its
// status: without exec, this process stays as the program's parent.
func handOff(path string, args, env []string) error {
	out := os.Stdout
	if protocolStdout != nil {
		out = protocolStdout
	}
	return runAndExit(path, args, env, out)
}

func runAndExit(path string, args, env []string, stdout *os.File) error {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, os.Stderr
	signal.Ignore(os.Interrupt) // the program reads Ctrl+C itself
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	os.Exit(0)
	return nil
}
