// Package deploy checks the Kubernetes manifests of deploy/k8s against the
// built binary: the Deployment's probes get 2xx/3xx from corvid serve
// started with the manifest's own arguments, and /acp, which no probe can
// use, answers as docs/scale.md says. (The manifests' schemas are checked
// by deploy/k8s/check.sh, which needs npm.)
package deploy

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

type deployment struct {
	Spec struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Args  []string `yaml:"args"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					ReadinessProbe probe `yaml:"readinessProbe"`
					LivenessProbe  probe `yaml:"livenessProbe"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// serveArgs are the manifest's arguments with what cannot run here
// replaced: the listener on loopback port 0, the token in a file of the
// test's, the scripted model.
func serveArgs(t *testing.T, args []string, tokenFile, script string) []string {
	t.Helper()
	var out []string
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--listen="):
			out = append(out, "--listen=127.0.0.1:0")
		case strings.HasPrefix(a, "--token-file="):
			out = append(out, "--token-file="+tokenFile)
		case strings.HasPrefix(a, "--model="):
			out = append(out, "--model=script:"+script)
		default:
			out = append(out, a)
		}
	}
	return out
}

func TestDeploymentProbesPassAgainstCorvidServe(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", "k8s", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d deployment
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 || len(cs[0].Args) == 0 || cs[0].Args[0] != "serve" {
		t.Fatalf("deployment.yaml: want one container running corvid serve, got %+v", cs)
	}
	c := cs[0]
	paths := []string{c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path}
	if paths[0] == "" || paths[1] == "" {
		t.Fatalf("deployment.yaml: want httpGet readiness and liveness probes, got %q", paths)
	}
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("s3cret-token-for-the-probe-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := testkit.WriteScript(t, map[string]any{"responses": []any{map[string]any{"parts": []any{map[string]any{"type": "text", "text": "ok"}}}}})
	cmd := exec.Command(testkit.BuildCorvid(t), serveArgs(t, c.Args, token, script)...)
	cmd.Env = append(testkit.IsolatedEnvAt(dir, "CORVID_HOME="+filepath.Join(dir, "home")), "CORVID_KEYRING=off")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "corvid serve: listening on "); ok {
				urls <- u
			}
		}
		close(urls)
	}()
	var acpURL string
	select {
	case acpURL = <-urls:
	case <-time.After(60 * time.Second):
		t.Fatal("corvid serve never said where it listens")
	}
	base := strings.TrimSuffix(acpURL, "/acp")
	client := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	status := func(method, path string, hdr ...string) int {
		t.Helper()
		req, err := http.NewRequest(method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// A kubelet's probe: GET without credentials; 200–399 is success.
	for _, p := range paths {
		if code := status("GET", p); code < 200 || code >= 400 {
			t.Errorf("probe GET %s = %d, want 2xx/3xx", p, code)
		}
	}
	// Why the probe is not /acp (docs/scale.md).
	bearer := []string{"Authorization", "Bearer s3cret-token-for-the-probe-test"}
	for _, tc := range []struct {
		method string
		hdr    []string
		want   int
	}{
		{"GET", nil, http.StatusUnauthorized},
		{"HEAD", nil, http.StatusUnauthorized},
		{"GET", bearer, http.StatusNotAcceptable},
		{"HEAD", bearer, http.StatusMethodNotAllowed},
	} {
		if code := status(tc.method, "/acp", tc.hdr...); code != tc.want {
			t.Errorf("%s /acp (token: %v) = %d, want %d as docs/scale.md says", tc.method, tc.hdr != nil, code, tc.want)
		}
	}
}
