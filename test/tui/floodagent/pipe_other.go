//go:build !linux

package main

// reportPipe: only Linux sizes pipes.
func reportPipe() {}
