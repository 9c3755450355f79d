//go:build !linux

package reaper

import "log/slog"

// Adopt is Linux only: elsewhere a detached descendant leaves corvid's tree.
func Adopt(*slog.Logger) error { return ErrUnsupported }
