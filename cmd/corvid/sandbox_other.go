//go:build !linux

package main

import "errors"

// restrictSelf fails: the shell sandbox is Landlock, which only Linux has.
func restrictSelf(mode string, write []string, net bool, unixFilter string) error {
	return errors.New("the shell sandbox needs Linux (Landlock)")
}

// unixFilterBuilt is false: no seccomp outside Linux.
func unixFilterBuilt() bool { return false }

// landlockABI is 0: no Landlock outside Linux.
func landlockABI() int { return 0 }
