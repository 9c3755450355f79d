package agent

import "context"

// WaitIdle waits until the session runs no turn (the latest one, and any
// drain turn after it, has ended), or ctx ends; it reports whether the
// session went idle. `corvid serve` uses it to let a turn whose client
// went away finish before the session is closed.
func (s *Session) WaitIdle(ctx context.Context) bool {
	for {
		s.runner.mu.Lock()
		t := s.runner.turn
		s.runner.mu.Unlock()
		if t == nil {
			return true
		}
		select {
		case <-t.done:
			s.runner.mu.Lock()
			same := s.runner.turn == t
			s.runner.mu.Unlock()
			if same {
				return true
			}
		case <-ctx.Done():
			return false
		}
	}
}

// Running reports whether a turn of the session is running now.
func (s *Session) Running() bool {
	s.runner.mu.Lock()
	t := s.runner.turn
	s.runner.mu.Unlock()
	if t == nil {
		return false
	}
	select {
	case <-t.done:
		return false
	default:
		return true
	}
}
