// Package release tests what corvid's release ships besides the binary: the ACP
// registry entry release/registry.js generates from a release's checksums.txt,
// its validator, and release/icon.svg. release/check.sh runs the same tools on a
// real GoReleaser snapshot; these tests need only node.
package release

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

const version = "1.2.3"

// archives are the files a release with Windows would publish.
var archives = map[string]string{ // registry platform -> archive
	"linux-x86_64":   "corvid_1.2.3_linux_amd64.tar.gz",
	"linux-aarch64":  "corvid_1.2.3_linux_arm64.tar.gz",
	"darwin-x86_64":  "corvid_1.2.3_darwin_amd64.tar.gz",
	"darwin-aarch64": "corvid_1.2.3_darwin_arm64.tar.gz",
	"windows-x86_64": "corvid_1.2.3_windows_amd64.zip",
}

func node(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; release/registry.js is tested where it is (CI installs Node)")
	}
	return p
}

func root(t *testing.T) string {
	t.Helper()
	r, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fakeRelease writes archives with distinct contents and a checksums.txt in
// GoReleaser's format (sha256sum's), computed here in Go.
func fakeRelease(t *testing.T) (dir string, sums map[string]string) {
	t.Helper()
	dir = t.TempDir()
	sums = map[string]string{}
	var lines []string
	for _, name := range archives {
		data := []byte("archive " + name)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(data)
		sums[name] = hex.EncodeToString(h[:])
		lines = append(lines, sums[name]+"  "+name)
	}
	// A file that is not an archive of this version must not become a target.
	lines = append(lines, strings.Repeat("ab", 32)+"  corvid_9.9.9_linux_amd64.tar.gz")
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, sums
}

func runNode(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(node(t), append([]string{filepath.Join(root(t), "release", "registry.js")}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

type target struct {
	Archive string   `json:"archive"`
	SHA256  string   `json:"sha256"`
	Cmd     string   `json:"cmd"`
	Args    []string `json:"args"`
}

type entry struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Version      string `json:"version"`
	License      string `json:"license"`
	Distribution struct {
		Binary map[string]target `json:"binary"`
		Npx    struct {
			Package string   `json:"package"`
			Args    []string `json:"args"`
		} `json:"npx"`
	} `json:"distribution"`
}

func generate(t *testing.T) (dir, agentPath string, sums map[string]string) {
	t.Helper()
	node(t)
	dir, sums = fakeRelease(t)
	out := filepath.Join(dir, "registry", "corvid")
	if o, err := runNode(t, "generate", "--version", "v"+version, "--checksums", filepath.Join(dir, "checksums.txt"), "--out", out); err != nil {
		t.Fatalf("generate: %v\n%s", err, o)
	}
	return dir, filepath.Join(out, "agent.json"), sums
}

func TestRegistryEntryFromChecksums(t *testing.T) {
	_, agentPath, sums := generate(t)
	raw, err := os.ReadFile(agentPath)
	if err != nil {
		t.Fatal(err)
	}
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	if e.ID != "corvid" || e.Name != "Corvid" || e.Version != version || e.License != "Apache-2.0" {
		t.Errorf("id/name/version/license = %q %q %q %q", e.ID, e.Name, e.Version, e.License)
	}
	if e.Distribution.Npx.Package != "@corvid-agent/corvid@"+version || strings.Join(e.Distribution.Npx.Args, " ") != "acp" {
		t.Errorf("npx = %+v", e.Distribution.Npx)
	}
	if len(e.Distribution.Binary) != len(archives) {
		t.Errorf("%d binary targets, want %d: %v", len(e.Distribution.Binary), len(archives), e.Distribution.Binary)
	}
	for plat, name := range archives {
		tg, ok := e.Distribution.Binary[plat]
		if !ok {
			t.Errorf("no target %s", plat)
			continue
		}
		wantURL := fmt.Sprintf("https://github.com/corvid-agent/corvid/releases/download/v%s/%s", version, name)
		if tg.Archive != wantURL {
			t.Errorf("%s archive = %s, want %s", plat, tg.Archive, wantURL)
		}
		if tg.SHA256 != sums[name] {
			t.Errorf("%s sha256 = %s, want %s", plat, tg.SHA256, sums[name])
		}
		wantCmd := "./corvid"
		if strings.HasPrefix(plat, "windows") {
			wantCmd = "./corvid.exe"
		}
		if tg.Cmd != wantCmd || strings.Join(tg.Args, " ") != "acp" {
			t.Errorf("%s cmd/args = %q %v", plat, tg.Cmd, tg.Args)
		}
	}
	icon, err := os.ReadFile(filepath.Join(filepath.Dir(agentPath), "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	committed, _ := os.ReadFile(filepath.Join(root(t), "release", "icon.svg"))
	if string(icon) != string(committed) {
		t.Error("the generated folder's icon.svg is not release/icon.svg")
	}
}

func TestRegistryValidatorAcceptsTheEntryAndRejectsBrokenOnes(t *testing.T) {
	dir, agentPath, _ := generate(t)
	icon := filepath.Join(root(t), "release", "icon.svg")
	sums := filepath.Join(dir, "checksums.txt")
	if o, err := runNode(t, "validate", agentPath, "--icon", icon, "--checksums", sums); err != nil {
		t.Fatalf("validate rejected the generated entry: %v\n%s", err, o)
	}
	if o, err := runNode(t, "selftest", agentPath, "--icon", icon); err != nil {
		t.Fatalf("selftest: %v\n%s", err, o)
	}

	// A checksum that does not match the release's checksums.txt.
	raw, _ := os.ReadFile(agentPath)
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	bin := doc["distribution"].(map[string]any)["binary"].(map[string]any)
	bin["linux-x86_64"].(map[string]any)["sha256"] = strings.Repeat("0", 64)
	bad := filepath.Join(t.TempDir(), "agent.json")
	b, _ := json.Marshal(doc)
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := runNode(t, "validate", bad, "--checksums", sums)
	if err == nil || !strings.Contains(o, "linux-x86_64.sha256") {
		t.Errorf("validate accepted a wrong sha256 (err %v):\n%s", err, o)
	}

	// An icon with a hard-coded colour.
	svg, _ := os.ReadFile(icon)
	coloured := filepath.Join(t.TempDir(), "icon.svg")
	if err := os.WriteFile(coloured, []byte(strings.Replace(string(svg), `fill="currentColor"`, `fill="#1a1a1a"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err = runNode(t, "validate", agentPath, "--icon", coloured)
	if err == nil || !strings.Contains(o, "#1a1a1a") {
		t.Errorf("validate accepted an icon with a hard-coded fill (err %v):\n%s", err, o)
	}
}

// TestIconIsMonochrome16 reads release/icon.svg with a real XML parser: the
// registry wants 16x16 and every paint currentColor (or none).
func TestIconIsMonochrome16(t *testing.T) {
	f, err := os.Open(filepath.Join(root(t), "release", "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	painted, first := 0, true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("icon.svg is not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if first {
			first = false
			if el.Name.Local != "svg" {
				t.Fatalf("root element %s", el.Name.Local)
			}
			for _, a := range el.Attr {
				switch a.Name.Local {
				case "viewBox":
					if a.Value != "0 0 16 16" {
						t.Errorf("viewBox %q", a.Value)
					}
				case "width", "height":
					if a.Value != "16" {
						t.Errorf("%s %q", a.Name.Local, a.Value)
					}
				}
			}
		}
		switch el.Name.Local {
		case "style", "image", "script", "foreignObject", "linearGradient", "radialGradient":
			t.Errorf("icon uses <%s>", el.Name.Local)
		}
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "fill", "stroke", "color", "stop-color", "style":
				if a.Value != "currentColor" && a.Value != "none" {
					t.Errorf("<%s %s=%q>: only currentColor or none", el.Name.Local, a.Name.Local, a.Value)
				}
				if a.Value == "currentColor" {
					painted++
				}
			}
		}
	}
	if painted == 0 {
		t.Error("nothing in the icon is painted with currentColor")
	}
}
