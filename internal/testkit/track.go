package testkit

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TrackSources stats every Go source and module file of the module, so that
// `go test`'s result cache, which remembers the files a test consulted,
// re-runs tests that drive a built binary whenever that binary's source
// changes. Without it a cached e2e pass could hide a broken binary.
func TrackSources() {
	root, err := ModuleRoot()
	if err != nil {
		return
	}
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum" || strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".json") {
			_, _ = os.Stat(path)
		}
		return nil
	})
}
