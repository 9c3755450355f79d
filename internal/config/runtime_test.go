package config

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestRuntimeDirPrefersCorvidHomeThenXDGThenTemp(t *testing.T) {
	uidDir := fmt.Sprintf("corvid-%d", os.Getuid())
	for _, tc := range []struct {
		name string
		env  MapEnv
		want string
	}{
		{"corvid home wins", MapEnv{"CORVID_HOME": "/h", "XDG_RUNTIME_DIR": "/run/user/1", "TMPDIR": "/t"}, filepath.Join("/h", "run")},
		{"xdg runtime dir", MapEnv{"XDG_RUNTIME_DIR": "/run/user/1", "TMPDIR": "/t"}, filepath.Join("/run/user/1", "corvid")},
		{"tmpdir with uid", MapEnv{"TMPDIR": "/t"}, filepath.Join("/t", uidDir)},
		{"os temp dir with uid", MapEnv{}, filepath.Join(os.TempDir(), uidDir)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuntimeDir(tc.env); got != tc.want {
				t.Errorf("RuntimeDir = %q, want %q", got, tc.want)
			}
		})
	}
}
