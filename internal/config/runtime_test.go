package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRuntimePlacePrefersCorvidHomeThenXDGThenSharedTemp(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  MapEnv
		want Runtime
	}{
		{"corvid home wins", MapEnv{"CORVID_HOME": "/h", "XDG_RUNTIME_DIR": "/run/user/1", "TMPDIR": "/t"}, Runtime{Dir: filepath.Join("/h", "run")}},
		{"xdg runtime dir", MapEnv{"XDG_RUNTIME_DIR": "/run/user/1", "TMPDIR": "/t"}, Runtime{Dir: filepath.Join("/run/user/1", "corvid")}},
		// No fixed name under a shared temp dir: each process makes its own.
		{"tmpdir is shared", MapEnv{"TMPDIR": "/t"}, Runtime{Dir: "/t", SharedTemp: true}},
		{"os temp dir is shared", MapEnv{}, Runtime{Dir: os.TempDir(), SharedTemp: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuntimePlace(tc.env); got != tc.want {
				t.Errorf("RuntimePlace = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSandboxUnixFilterForcesSeccompOnlyWhenAsked(t *testing.T) {
	for in, want := range map[string]string{"": "", "seccomp": "seccomp", " SECCOMP ": "seccomp", "landlock": "", "1": ""} {
		if got := SandboxUnixFilter(MapEnv{"CORVID_SANDBOX_UNIX_FILTER": in}); got != want {
			t.Errorf("SandboxUnixFilter(%q) = %q, want %q", in, got, want)
		}
	}
}
