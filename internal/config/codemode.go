package config

import (
	"fmt"
	"time"
)

// CodeModeLimits is the [code_mode] table: the limits of codeMode "all"
// scripts (docs/codemode.md). Zero fields keep the defaults. Read from the
// user config only: a project must not lift them.
type CodeModeLimits struct {
	Timeout        time.Duration `toml:"timeout"`
	MaxSteps       uint64        `toml:"max_steps"`
	MaxMemoryMB    int64         `toml:"max_memory_mb"`
	MaxOutputBytes int           `toml:"max_output_bytes"`
}

func (f *File) mergeCodeMode(o *File, from string) error {
	l := o.CodeMode
	if l == (CodeModeLimits{}) {
		return nil
	}
	if l.Timeout < 0 || l.MaxMemoryMB < 0 || l.MaxOutputBytes < 0 {
		return fmt.Errorf("code_mode limits must not be negative")
	}
	if from != "" {
		f.Ignored = append(f.Ignored, fmt.Sprintf("[code_mode] in %s (read from the user config only)", from))
		return nil
	}
	f.CodeMode = l
	return nil
}
