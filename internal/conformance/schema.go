package conformance

import (
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// acpSchema is the kit's compiled ACP v1 schema with one-line errors for reports.
type acpSchema struct{ *acpkit.Schema }

func loadSchema() (*acpSchema, error) {
	s, err := acpkit.LoadSchema()
	if err != nil {
		return nil, err
	}
	return &acpSchema{s}, nil
}

// validate checks raw against #/$defs/<def>. The error is one line and names def.
func (s *acpSchema) validate(def string, raw []byte) error {
	if err := s.Validate(def, raw); err != nil {
		return fmt.Errorf("%s", oneLine(strings.ReplaceAll(err.Error(), "\n", "; "), 400))
	}
	return nil
}

// oneLine folds s onto one line and cuts it to at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
