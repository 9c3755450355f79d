//go:build !unix

package tui

import "errors"

func syscallMkfifo(string) error { return errors.New("no FIFOs here") }
