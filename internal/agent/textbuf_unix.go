//go:build unix

package agent

import "syscall"

// mapBlock maps n bytes of anonymous memory outside the Go heap; nil if
// the system refuses.
func mapBlock(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	return b
}

// unmapBlock returns a block mapBlock gave, whole, to the system.
func unmapBlock(b []byte) { _ = syscall.Munmap(b) }
