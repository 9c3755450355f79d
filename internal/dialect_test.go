package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyTheDialectFilesSpellCodeBuddysKeys: the core hands front ends
// typed events (agent.Tags), and internal/acpserver/codebuddy.go is the one
// place whose string literals name CodeBuddy's _meta keys (issue #30). The
// store's migration names the keys earlier releases stored, frozen; test
// kits may name anything.
func TestOnlyTheDialectFilesSpellCodeBuddysKeys(t *testing.T) {
	allowed := map[string]bool{
		"acpserver/codebuddy.go": true,
		"store/retype/retype.go": true,
		"store/migrate3.go":      true,
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(path, "testkit") || strings.HasPrefix(path, "conformance")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || allowed[path] {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.Contains(lit.Value, "codebuddy.ai/") {
				t.Errorf("%s: %s names a CodeBuddy key outside acpserver/codebuddy.go", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
