package agent

import (
	"context"

	"github.com/corvid-agent/corvid/internal/store"
)

// FoldStored folds a session's stored rows as the store reads them, like
// [Fold] but without holding every row: memory follows the folded log
// (merged messages, final tool states), not the number of rows.
func FoldStored(ctx context.Context, st *store.Store, sessionID string) (*Log, error) {
	f := folder{log: &Log{}, finals: map[string]int{}}
	err := st.ScanEvents(ctx, sessionID, func(r store.Event) error {
		f.row(&r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f.finish(), nil
}
