//go:build !linux

package config

// hideExecEnvironment is Linux only. Elsewhere the exec-time environment
// stays as it was: on macOS a process of the same user can still read it
// (`ps -E`, sysctl KERN_PROCARGS2); docs/security.md says so.
func hideExecEnvironment(func(name string) bool) error { return nil }
