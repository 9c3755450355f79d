// Package dashboard is the page `corvid serve` shows at `/` on its HTTP
// listeners: hand-written HTML, CSS and JavaScript embedded in the binary
// (no build step, no request to any other host). The page is an ACP client
// of the daemon over its WebSocket at /acp (docs/dashboard.md).
//
// This package also holds the browser's way in when the daemon has a token:
// a browser cannot set Authorization on a WebSocket, so `corvid serve`
// prints a one-time login link (NewLoginCode); opening it trades the code
// for an HttpOnly, SameSite=Strict cookie (a random secret of its own, not
// the token), which Authorized accepts on the page and on /acp alike. The
// token and the code never reach the page or a later URL.
//
// Origin checks stay in internal/serve, which mounts Handler behind them.
package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"
)

//go:embed assets
var assets embed.FS

// CSP is the Content-Security-Policy of every response of the listener:
// only this origin's scripts, styles and connections (ws: to the same
// host and port counts as 'self' in CSP 3), nothing inline, no framing.
const CSP = "default-src 'self'; connect-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// SetHeaders puts the security headers on a response.
func SetHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// Not no-referrer: with it Chromium sends `Origin: null` on the login
	// form's POST, which the Origin check refuses.
	h.Set("Referrer-Policy", "same-origin")
}

// codeTTL is how long a printed login link stays good.
const codeTTL = 15 * time.Minute

// Dashboard serves the page and keeps the login codes and cookies of one
// daemon. The zero value is not usable; call New.
type Dashboard struct {
	token string

	mu      sync.Mutex
	codes   map[string]time.Time // unused login codes and their expiry
	secrets map[string]struct{}  // cookie values issued
	now     func() time.Time
}

// New returns the dashboard of a daemon whose HTTP requests need token
// (empty: none needed).
func New(token string) *Dashboard {
	return &Dashboard{
		token:   token,
		codes:   map[string]time.Time{},
		secrets: map[string]struct{}{},
		now:     time.Now,
	}
}

// TokenRequired says whether a login is needed.
func (d *Dashboard) TokenRequired() bool { return d.token != "" }

// NewLoginCode returns a fresh single-use code for /login?once=CODE.
func (d *Dashboard) NewLoginCode() string {
	code := random()
	d.mu.Lock()
	d.codes[code] = d.now().Add(codeTTL)
	d.mu.Unlock()
	return code
}

// Authorized says whether a request may use the page and /acp: no token
// is configured, it carries `Authorization: Bearer TOKEN`, or the cookie a
// login issued.
func (d *Dashboard) Authorized(r *http.Request) bool {
	if d.token == "" {
		return true
	}
	if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return subtle.ConstantTimeCompare([]byte(got), []byte(d.token)) == 1
	}
	c, err := r.Cookie(cookieName(r))
	if err != nil || c.Value == "" {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.secrets[c.Value]
	return ok
}

// ServeHTTP serves /login and the embedded files. The caller has checked
// the Origin; the security headers are set here too.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	SetHeaders(w.Header())
	if r.URL.Path == "/login" {
		d.login(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	// style.css holds no secret, and the login form needs it.
	if r.URL.Path != "/style.css" && !d.Authorized(r) {
		// The page itself answers with the login form (still 401).
		if r.URL.Path == "/" {
			b, _ := fs.ReadFile(assets, "assets/login.html")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write(b)
			return
		}
		http.Error(w, "Unauthorized: open the login link `corvid serve` printed", http.StatusUnauthorized)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "" {
		name = "index.html"
	}
	if strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(assets, "assets/"+name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", contentType(name))
	w.Header().Set("Cache-Control", "no-cache")
	if r.Method == http.MethodGet {
		_, _ = w.Write(b)
	}
}

// login trades a login code (GET /login?once=CODE) or the token (POST
// from the form GET /login shows) for the cookie, and redirects to / so
// the code leaves the address bar. A code works once.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if d.token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther) // nothing to log in to
		return
	}
	good := false
	switch {
	case r.Method == http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		got := r.PostFormValue("token")
		good = subtle.ConstantTimeCompare([]byte(got), []byte(d.token)) == 1
	case r.Method != http.MethodGet:
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	case !r.URL.Query().Has("once"):
		b, _ := fs.ReadFile(assets, "assets/login.html")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b)
		return
	default:
		code := r.URL.Query().Get("once")
		d.mu.Lock()
		exp, ok := d.codes[code]
		delete(d.codes, code)
		d.mu.Unlock()
		good = ok && code != "" && d.now().Before(exp)
	}
	if !good {
		http.Error(w, "Unknown, used or expired login link, or a wrong token: restart `corvid serve` for a new link, or give the token at /login", http.StatusUnauthorized)
		return
	}
	secret := random()
	d.mu.Lock()
	d.secrets[secret] = struct{}{}
	d.mu.Unlock()
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(r), Value: secret, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"),
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// cookieName is per port (the Host's), as cookies ignore ports: two
// daemons on one host keep their cookies apart.
func cookieName(r *http.Request) string {
	port := "80"
	if i := strings.LastIndexByte(r.Host, ':'); i >= 0 && !strings.HasSuffix(r.Host, "]") {
		port = r.Host[i+1:]
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return "corvid_dash"
		}
	}
	return "corvid_dash_" + port
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func contentType(name string) string {
	switch {
	case strings.HasSuffix(name, ".html"):
		return "text/html; charset=utf-8"
	case strings.HasSuffix(name, ".js"):
		return "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".css"):
		return "text/css; charset=utf-8"
	case strings.HasSuffix(name, ".svg"):
		return "image/svg+xml"
	}
	return "application/octet-stream"
}
