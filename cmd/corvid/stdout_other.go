//go:build !unix

package main

import "os"

// claimStdout keeps the real stdout for the protocol and points os.Stdout
// at stderr. Without dup2, a child's or a C library's print to fd 1 still
// reaches the protocol stream here; Go code's cannot.
func claimStdout() (*os.File, error) {
	protocolStdout = os.Stdout
	os.Stdout = os.Stderr
	return protocolStdout, nil
}
