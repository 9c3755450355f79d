//go:build !unix

package tui

import "time"

// processUsage reports nothing where getrusage is missing.
func processUsage() (cpu time.Duration, switches int64) { return 0, 0 }
