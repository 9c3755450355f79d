package serve

import "testing"

func TestListenAddressesAndWhichAreLoopback(t *testing.T) {
	for in, loopback := range map[string]bool{
		"127.0.0.1:7777":   true,
		"localhost:0":      true,
		"[::1]:7777":       true,
		"unix:/tmp/x.sock": true,
		"0.0.0.0:7777":     false,
		":7777":            false,
		"10.0.0.5:7777":    false,
		"example.com:80":   false,
	} {
		a, err := ParseAddr(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if a.Loopback() != loopback {
			t.Errorf("%s: loopback %v, want %v", in, a.Loopback(), loopback)
		}
	}
	for _, bad := range []string{"unix:", "7777", "http://127.0.0.1:7777/acp"} {
		if _, err := ParseAddr(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
