package main

import (
	"testing"

	"github.com/alecthomas/kong"
)

func BenchmarkKongNew(b *testing.B) {
	for _, c := range []struct {
		name string
		cli  func() any
	}{{"whole", func() any { return &CLI{} }}, {"acp", func() any { return &acpCLI{} }}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				p, err := kong.New(c.cli(), kong.Name("corvid"), kong.UsageOnError(), kong.Vars{"version": "x"})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Parse([]string{"acp", "-m", "script:x.json"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
