package agent

import "sync"

// notices holds what the user is told about a session's start (MCP servers
// that failed, ignored project settings) until the front end takes them.
type notices struct {
	mu      sync.Mutex
	pending []string
	taken   bool // the front end took the start notices
}

// add keeps text with the start notices; false when they were taken
// already (the caller tells the user another way).
func (n *notices) add(text ...string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.taken {
		return false
	}
	n.pending = append(n.pending, text...)
	return true
}

// take returns the start notices, once.
func (n *notices) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.pending
	n.pending, n.taken = nil, true
	return out
}
