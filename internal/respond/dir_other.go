//go:build !unix

package respond

import (
	"fmt"
	"os"
)

// PrepareDir makes dir exist and refuses a link in its place; these
// platforms have no unix ownership or modes to check.
func PrepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create control socket directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("control socket directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("control socket directory %s is not a directory", dir)
	}
	return nil
}
