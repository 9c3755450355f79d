package llm

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHTTPClientFollowsRedirectsOnlyWithinTheOrigin: the key's header
// reaches the same origin after a redirect, and nothing reaches another.
func TestHTTPClientFollowsRedirectsOnlyWithinTheOrigin(t *testing.T) {
	var elsewhere []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere = append(elsewhere, r.Header.Get("X-Api-Key"))
	}))
	defer other.Close()
	var moved []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/a":
			http.Redirect(w, r, "/v1/b", http.StatusTemporaryRedirect)
		case "/v1/b":
			moved = append(moved, r.Header.Get("X-Api-Key"))
			http.Redirect(w, r, other.URL+"/stolen", http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	c := HTTPClient(srv.URL+"/v1/", nil)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/a", strings.NewReader("{}"))
	req.Header.Set("X-Api-Key", "sk-secret")
	_, err := c.Do(req)
	if !errors.Is(err, ErrOtherOrigin) {
		t.Errorf("err = %v, want ErrOtherOrigin", err)
	}
	if len(moved) != 1 || moved[0] != "sk-secret" {
		t.Errorf("the same-origin redirect got %q, want the key once", moved)
	}
	if len(elsewhere) != 0 {
		t.Errorf("another origin received %d requests (X-Api-Key %q)", len(elsewhere), elsewhere)
	}
}

// TestHTTPClientRefusesADowngradeToPlainHTTP: https://h:443 → http://h is
// another origin, so the key never travels in clear text.
func TestHTTPClientRefusesADowngradeToPlainHTTP(t *testing.T) {
	c := HTTPClient("https://gateway.example/v1", nil)
	for _, to := range []string{"http://gateway.example/v1/x", "http://gateway.example:443/v1/x", "https://gateway.example:8443/v1/x", "https://evil.example/v1/x"} {
		u, _ := url.Parse(to)
		if err := c.CheckRedirect(&http.Request{URL: u}, nil); !errors.Is(err, ErrOtherOrigin) {
			t.Errorf("redirect to %s: err = %v, want ErrOtherOrigin", to, err)
		}
	}
	u, _ := url.Parse("https://GATEWAY.example:443/v2/x")
	if err := c.CheckRedirect(&http.Request{URL: u}, nil); err != nil {
		t.Errorf("redirect within the origin refused: %v", err)
	}
	if err := HTTPClient("::not a url", nil).CheckRedirect(&http.Request{URL: u}, nil); !errors.Is(err, ErrOtherOrigin) {
		t.Errorf("a base URL that does not parse followed a redirect: %v", err)
	}
}

// TestNoProviderBuildsItsOwnHTTPClient scans the non-test sources under
// internal/llm: a provider that built an http.Client (or used
// http.DefaultClient, http.Get, …) would follow redirects to any origin
// with its key, so every one must go through HTTPClient.
func TestNoProviderBuildsItsOwnHTTPClient(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == "httpclient.go" {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		httpName := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "net/http" {
				httpName = "http"
				if imp.Name != nil {
					httpName = imp.Name.Name
				}
			}
		}
		if httpName == "" {
			return nil
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == httpName {
				switch sel.Sel.Name {
				case "Client", "DefaultClient", "Get", "Head", "Post", "PostForm":
					// http.Client as a field or parameter type is fine; a
					// value of it is built only in httpclient.go.
					if sel.Sel.Name == "Client" && !builtHere(f, sel) {
						return true
					}
					t.Errorf("%s: uses http.%s; send requests through llm.HTTPClient", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 3 {
		t.Fatalf("only %d files import net/http; the scan checks nothing", checked)
	}
}

// builtHere reports whether sel (http.Client) is the type of a composite
// literal or the argument of new() in f.
func builtHere(f *ast.File, sel *ast.SelectorExpr) bool {
	built := false
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			built = built || n.Type == sel
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 && n.Args[0] == sel {
				built = true
			}
		}
		return !built
	})
	return built
}
