package dashboard

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The budget: the page, every asset together, ≤ 200 KB gzipped.
func TestPageIsSmall(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(assets, p)
		_, _ = zw.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = zw.Close()
	if buf.Len() > 200<<10 {
		t.Errorf("assets are %d bytes gzipped, over 200 KB", buf.Len())
	}
}

// No asset may load anything from another host, nor use innerHTML.
func TestAssetsStayOnThisOrigin(t *testing.T) {
	_ = fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, _ error) error {
		if d.IsDir() {
			return nil
		}
		b, _ := fs.ReadFile(assets, p)
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", `src="http`, `href="http`, "@import"} {
			if bytes.Contains(b, []byte(bad)) {
				t.Errorf("%s contains %q", p, bad)
			}
		}
		return nil
	})
}

func TestLoginCodeIsSingleUseAndExpires(t *testing.T) {
	d := New("0123456789abcdef")
	now := time.Unix(1000, 0)
	d.now = func() time.Time { return now }
	login := func(code string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		d.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7777/login?once="+code, nil))
		return w
	}
	code := d.NewLoginCode()
	w := login(code)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("first use: %d", w.Code)
	}
	c := w.Result().Cookies()
	if len(c) != 1 || c[0].Name != "corvid_dash_7777" || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v", c)
	}
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7777/", nil)
	r.AddCookie(c[0])
	if !d.Authorized(r) {
		t.Error("the issued cookie is refused")
	}
	r = httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8888/", nil)
	r.AddCookie(c[0])
	if d.Authorized(r) {
		t.Error("the cookie of port 7777 works on port 8888")
	}
	if w := login(code); w.Code != http.StatusUnauthorized {
		t.Errorf("second use: %d, want 401", w.Code)
	}
	late := d.NewLoginCode()
	now = now.Add(codeTTL + time.Second)
	if w := login(late); w.Code != http.StatusUnauthorized {
		t.Errorf("expired code: %d, want 401", w.Code)
	}
	if w := login(""); w.Code != http.StatusUnauthorized {
		t.Errorf("empty code: %d, want 401", w.Code)
	}
}

func TestNoTokenNeedsNoLoginAndServesThePage(t *testing.T) {
	d := New("")
	w := httptest.NewRecorder()
	d.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `<script type="module" src="/app.js">`) {
		t.Fatalf("GET /: %d", w.Code)
	}
	if w.Header().Get("Content-Security-Policy") != CSP || w.Header().Get("X-Frame-Options") != "DENY" {
		t.Errorf("headers %v", w.Header())
	}
	for _, p := range []string{"/../dashboard.go", "/assets/app.js", "/x/y"} {
		w := httptest.NewRecorder()
		d.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, w.Code)
		}
	}
}

func TestTheTokenFormLogsInOnlyWithTheToken(t *testing.T) {
	d := New("0123456789abcdef")
	post := func(token string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		d.ServeHTTP(w, r)
		return w
	}
	for _, bad := range []string{"", "0123456789abcdeX", "0123456789abcdef0"} {
		if w := post(bad); w.Code != http.StatusUnauthorized || len(w.Result().Cookies()) != 0 {
			t.Errorf("token %q: %d, want 401 and no cookie", bad, w.Code)
		}
	}
	w := post("0123456789abcdef")
	if w.Code != http.StatusSeeOther || len(w.Result().Cookies()) != 1 {
		t.Fatalf("the right token: %d", w.Code)
	}
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7777/", nil)
	r.AddCookie(w.Result().Cookies()[0])
	if !d.Authorized(r) {
		t.Error("the form's cookie is refused")
	}
	// Without the cookie, / answers 401 with the form, never the app.
	w = httptest.NewRecorder()
	d.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7777/", nil))
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), `name="token"`) || strings.Contains(w.Body.String(), "app.js") {
		t.Errorf("GET / without a cookie: %d %q", w.Code, w.Body.String())
	}
}
