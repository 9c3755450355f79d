package main

import (
	"github.com/corvid-agent/corvid/internal/codemode"
	"github.com/corvid-agent/corvid/internal/config"
)

// codeModeLimits turns the [code_mode] table into script limits.
func codeModeLimits(l config.CodeModeLimits) codemode.Limits {
	return codemode.Limits{Timeout: l.Timeout, MaxSteps: l.MaxSteps, MaxMemory: l.MaxMemoryMB << 20, MaxOutput: l.MaxOutputBytes}
}
