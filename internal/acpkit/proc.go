package acpkit

import (
	"fmt"
	"os"
	"os/exec"
)

// Proc is an agent process started by [Spawn] in a process group of its own.
type Proc struct {
	Cmd    *exec.Cmd
	Stdin  *os.File // the agent's stdin; close it to end the connection the ACP way
	Stdout *os.File // read end of the agent's stdout
	Stderr *os.File // read end of the agent's stderr

	done    chan struct{}
	waitErr error
}

// Spawn starts argv in dir with exactly env, in its own process group (on Unix) so that
// [Proc.Kill] reaches everything it spawned. The pipes are real *os.File pairs, not
// io.Writers, so the process is reaped as soon as it exits even if a grandchild still holds
// stdout or stderr open.
func Spawn(argv []string, dir string, env []string) (*Proc, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("acpkit: no command to spawn")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	OwnGroup(cmd)
	var ends [6]*os.File // inR, inW, outR, outW, errR, errW
	closeAll := func() {
		for _, f := range ends {
			if f != nil {
				f.Close()
			}
		}
	}
	for i := 0; i < len(ends); i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, err
		}
		ends[i], ends[i+1] = r, w
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0], ends[3], ends[5]
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	ends[0].Close()
	ends[3].Close()
	ends[5].Close()
	p := &Proc{Cmd: cmd, Stdin: ends[1], Stdout: ends[2], Stderr: ends[4], done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Done is closed once the process has exited and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is cmd.Wait's result; valid after Done is closed.
func (p *Proc) Err() error {
	<-p.done
	return p.waitErr
}

// Kill kills the process and its whole process group. It is harmless when they are gone.
func (p *Proc) Kill() { KillGroup(p.Cmd) }
