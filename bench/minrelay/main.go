// Command minrelay is the least a relay to `corvid serve` can do: dial the
// daemon's socket (its only argument) and copy stdin and stdout to it
// unchanged, as `corvid acp --connect unix:PATH` does, with none of
// corvid's code. bench/compare.sh runs it beside the relay and the floor:
// minrelay's start-up less the floor's is what the daemon's round trip
// costs, and the relay's less minrelay's what the corvid binary adds.
// Build it static (CGO_ENABLED=0).
package main

import (
	"io"
	"net"
	"os"
)

func main() {
	c, err := net.Dial("unix", os.Args[1])
	if err != nil {
		os.Exit(1)
	}
	uc := c.(*net.UnixConn)
	go func() {
		_, _ = io.Copy(uc, os.Stdin)
		_ = uc.CloseWrite()
	}()
	_, _ = io.Copy(os.Stdout, uc)
}
