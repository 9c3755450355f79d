// Package dashboard drives the page `corvid serve` shows at / with attacks
// from Go (this file) and, through dashboard.test.mjs, in Debian's Chromium
// (browser_test.go, run.sh).
//
// Run with `go test ./test/dashboard/`; set CORVID_BIN to test a prebuilt binary.
package dashboard

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var dashboardAt = regexp.MustCompile(`corvid serve: dashboard at (\S+)`)

// startDaemon runs `corvid serve` on a loopback port (with a token when
// token is not empty) and returns the printed dashboard link.
func startDaemon(t *testing.T, token string) string {
	t.Helper()
	home := t.TempDir()
	script := filepath.Join(home, "s.json")
	if err := os.WriteFile(script, []byte(`{"responses":[{"parts":[{"type":"text","text":"hi"}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "-m", "script:" + script, "--listen", "127.0.0.1:0"}
	if token != "" {
		tf := filepath.Join(home, "token")
		if err := os.WriteFile(tf, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--token-file", tf)
	}
	cmd := exec.Command(testkit.BuildCorvid(t), args...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "CORVID_HOME="+filepath.Join(home, ".corvid"), "CORVID_KEYRING=off", "XDG_RUNTIME_DIR=", "XDG_CONFIG_HOME=", "XDG_DATA_HOME=")
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errp)
		for sc.Scan() {
			if m := dashboardAt.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case link := <-found:
		return link
	case <-time.After(20 * time.Second):
		t.Fatal("corvid serve printed no dashboard link")
		return ""
	}
}

func get(t *testing.T, url string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

func base(link string) string {
	i := strings.Index(link[len("http://"):], "/")
	return link[:len("http://")+i]
}

func TestEveryResponseCarriesCSPAndNoFraming(t *testing.T) {
	b := base(startDaemon(t, ""))
	for _, path := range []string{"/", "/app.js", "/style.css", "/nope", "/acp"} {
		resp := get(t, b+path, nil)
		h := resp.Header
		if csp := h.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "connect-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: X-Frame-Options %q, X-Content-Type-Options %q", path, h.Get("X-Frame-Options"), h.Get("X-Content-Type-Options"))
		}
	}
	if resp := get(t, b+"/", nil); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("/ without a token: %d %s, want 200 text/html", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func TestForeignOriginIsRefusedOnThePageAndTheWebSocket(t *testing.T) {
	b := base(startDaemon(t, ""))
	evil := map[string]string{"Origin": "http://evil.example"}
	for _, path := range []string{"/", "/app.js", "/login?once=x"} {
		if resp := get(t, b+path, evil); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s from a foreign Origin: %d, want 403", path, resp.StatusCode)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws := "ws" + strings.TrimPrefix(b, "http") + "/acp"
	_, resp, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("WebSocket upgrade from a foreign Origin: err %v, resp %v; want 403", err, resp)
	}
	conn, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {b}}})
	if err != nil {
		t.Fatalf("WebSocket upgrade from the page's own Origin: %v", err)
	}
	_ = conn.CloseNow()
}

func TestTokenDaemonNeedsTheLoginCookieAndTheCodeWorksOnce(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	link := startDaemon(t, token)
	b := base(link)
	if !strings.Contains(link, "/login?once=") || strings.Contains(link, token) {
		t.Fatalf("login link %q: want /login?once=CODE, never the token", link)
	}
	for _, path := range []string{"/", "/app.js", "/view.js", "/md.js", "/rpc.js"} {
		if resp := get(t, b+path, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without cookie or token: %d, want 401", path, resp.StatusCode)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws := "ws" + strings.TrimPrefix(b, "http") + "/acp"
	if _, resp, err := websocket.Dial(ctx, ws, nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("WebSocket upgrade without cookie or token: err %v; want 401", err)
	}
	if resp := get(t, b+"/login?once=forged", nil); resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Errorf("a forged code: %d with %d cookies, want 401 and none", resp.StatusCode, len(resp.Cookies()))
	}

	resp := get(t, link, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("the login link: %d to %q, want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	cs := resp.Cookies()
	if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Path != "/" {
		t.Fatalf("login cookie %+v: want one HttpOnly, SameSite=Strict cookie for /", cs)
	}
	if strings.Contains(cs[0].Value, token) || strings.Contains(link, cs[0].Value) {
		t.Fatal("the cookie carries the token or the code")
	}
	cookie := map[string]string{"Cookie": cs[0].Name + "=" + cs[0].Value}
	if r := get(t, b+"/", cookie); r.StatusCode != 200 {
		t.Errorf("GET / with the cookie: %d, want 200", r.StatusCode)
	}
	conn, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {cookie["Cookie"]}, "Origin": {b}}})
	if err != nil {
		t.Fatalf("WebSocket upgrade with the cookie: %v", err)
	}
	_ = conn.CloseNow()
	if r := get(t, b+"/", map[string]string{"Cookie": cs[0].Name + "=" + strings.Repeat("0", len(cs[0].Value))}); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET / with a forged cookie: %d, want 401", r.StatusCode)
	}
	if r := get(t, link, nil); r.StatusCode != http.StatusUnauthorized || len(r.Cookies()) != 0 {
		t.Errorf("the login link a second time: %d with %d cookies, want 401 and none", r.StatusCode, len(r.Cookies()))
	}
	if r := get(t, b+"/", map[string]string{"Authorization": "Bearer " + token}); r.StatusCode != 200 {
		t.Errorf("GET / with the bearer token: %d, want 200", r.StatusCode)
	}
}
