// Package reaper keeps every process corvid starts inside corvid's process
// tree, however it detaches, so that the control socket (internal/respond)
// can tell a person's `corvid respond` from a process corvid started.
//
// Start with Adopt, called once by `corvid acp` before it starts any
// process. On Linux it makes corvid the child subreaper of its descendants
// (prctl PR_SET_CHILD_SUBREAPER): a process that leaves its parent with
// setsid or a double fork is re-parented to corvid, not to init, so the walk
// up its parent chain still meets corvid. Adopted processes become corvid's
// children, and Adopt reaps the ones that exit, so they do not linger as
// zombies.
//
// Invariant: the reaper never waits for a child that Go's os/exec started.
// Those are waited for through the pidfd Go holds for each of them, and
// reaping one first would make its Cmd.Wait fail; so a zombie child is
// reaped only when no pidfd of this process refers to it. Where Go cannot
// use pidfds (Linux before 5.4), Adopt does nothing and says so.
package reaper

import "errors"

// ErrUnsupported is returned by Adopt where detached descendants cannot be
// kept in the tree.
var ErrUnsupported = errors.New("this system cannot keep detached processes below corvid")
