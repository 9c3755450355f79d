// Command compare times ACP agents side by side, interleaved round by
// round so that load from other processes hits them alike: spawn →
// initialize response, RSS of the process tree 50 ms after session/new was
// answered, and stdin EOF → process reaped. It prints a markdown table of
// medians, with each agent's ratio to the first one named after -base.
//
//	go run ./bench/compare -n 30 -agent 'corvid=/tmp/corvid acp -m script:/tmp/s.json' -agent 'floor=/tmp/floor'
//
// Every agent runs in its own temporary HOME with the environment given
// by -env (and PATH); bench/compare.sh builds the binaries and calls it.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

type agentSpec struct {
	name string
	argv []string
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

type sample struct {
	init, exit time.Duration
	rssKiB     int
	faults     int // minor page faults of the process when initialize was answered
}

func main() {
	var agents, envs listFlag
	n := flag.Int("n", 30, "rounds (each agent runs once per round)")
	settle := flag.Duration("settle", 50*time.Millisecond, "wait after session/new before reading RSS")
	flag.Var(&agents, "agent", "NAME=COMMAND ARGS… (repeat; the first is the base of the ratios)")
	flag.Var(&envs, "env", "KEY=VALUE added to every agent's environment (repeat)")
	flag.Parse()
	var specs []agentSpec
	for _, a := range agents {
		name, cmd, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(cmd) == "" {
			fatalf("-agent %q: want NAME=COMMAND", a)
		}
		specs = append(specs, agentSpec{name: name, argv: strings.Fields(cmd)})
	}
	if len(specs) == 0 {
		fatalf("no -agent given")
	}
	samples := make([][]sample, len(specs))
	for round := range *n + 1 { // round 0 warms the page cache and is dropped
		for k := range specs {
			i := (k + round) % len(specs) // rotate who goes first
			s, err := runOnce(specs[i], envs, *settle)
			if err != nil {
				fatalf("%s: %v", specs[i].name, err)
			}
			if round > 0 {
				samples[i] = append(samples[i], s)
			}
		}
	}
	printTable(specs, samples, *n)
}

func runOnce(a agentSpec, envs []string, settle time.Duration) (sample, error) {
	home, err := os.MkdirTemp("", "acpcmp")
	if err != nil {
		return sample{}, err
	}
	defer os.RemoveAll(home)
	cmd := exec.Command(a.argv[0], a.argv[1:]...)
	cmd.Dir = home
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}, envs...)
	inR, inW, err := os.Pipe()
	if err != nil {
		return sample{}, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return sample{}, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW // plain files: no copying goroutines
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	inR.Close()
	outW.Close()
	defer outR.Close()
	r := bufio.NewReaderSize(outR, 1<<20)
	var s sample
	inW.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n")
	if _, err := readResponse(r, 1); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return s, fmt.Errorf("initialize: %v", err)
	}
	s.init = time.Since(start)
	s.faults = minorFaults(cmd.Process.Pid)
	fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", home)
	if _, err := readResponse(r, 2); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return s, fmt.Errorf("session/new: %v", err)
	}
	time.Sleep(settle)
	s.rssKiB = treeRSS(cmd.Process.Pid)
	eof := time.Now()
	inW.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		s.exit = time.Since(eof)
		if err != nil {
			return s, fmt.Errorf("after stdin EOF: %v, want exit 0", err)
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
		s.exit = -1 // never exited on its own
	}
	return s, nil
}

// readResponse reads lines until the response with id (notifications and
// agent requests are skipped).
func readResponse(r *bufio.Reader, id int) ([]byte, error) {
	want := []byte(`"id":` + strconv.Itoa(id))
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		if bytes.Contains(line, want) && !bytes.Contains(line, []byte(`"method"`)) {
			return line, nil
		}
	}
}

// minorFaults returns pid's minor page faults so far (Linux; 0 elsewhere).
// On the VMs this runs on a page fault costs 15–30 µs, so the count
// explains most of a start-up time and, unlike the time, hardly moves with
// the machine's load.
func minorFaults(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:])) // state ppid pgrp session tty_nr tpgid flags minflt ...
	if len(f) < 8 {
		return 0
	}
	n, _ := strconv.Atoi(f[7])
	return n
}

// treeRSS sums VmRSS (KiB) over pid and its descendants.
func treeRSS(pid int) int {
	children := map[int][]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so cut at the last ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 {
			if pp, err := strconv.Atoi(f[1]); err == nil {
				children[pp] = append(children[pp], p)
			}
		}
	}
	total := 0
	var walk func(int)
	walk = func(p int) {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "status"))
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				k, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				total += k
			}
		}
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(pid)
	return total
}

func printTable(specs []agentSpec, samples [][]sample, n int) {
	type row struct {
		name string
		val  func(s sample) float64
		unit string
	}
	rows := []row{
		{"spawn → initialize", func(s sample) float64 { return ms(s.init) }, "ms"},
		{"page faults to the initialize answer (the process)", func(s sample) float64 { return float64(s.faults) }, ""},
		{"idle RSS after session/new (process tree)", func(s sample) float64 { return float64(s.rssKiB) / 1024 }, "MiB"},
		{"stdin EOF → exit", func(s sample) float64 { return ms(s.exit) }, "ms"},
	}
	fmt.Printf("| measure (median of %d, interleaved) |", n)
	for i, a := range specs {
		fmt.Printf(" %s |", a.name)
		if i > 0 {
			fmt.Printf(" %s / %s |", specs[0].name, a.name)
		}
	}
	fmt.Print("\n|---|")
	for i := range specs {
		fmt.Print("---:|")
		if i > 0 {
			fmt.Print("---:|")
		}
	}
	fmt.Println()
	for _, r := range rows {
		fmt.Printf("| %s |", r.name)
		base := 0.0
		for i := range specs {
			vals := make([]float64, 0, len(samples[i]))
			never := false
			for _, s := range samples[i] {
				if r.unit == "ms" && r.name == "stdin EOF → exit" && s.exit < 0 {
					never = true
				}
				vals = append(vals, r.val(s))
			}
			slices.Sort(vals)
			m := vals[len(vals)/2]
			if len(vals)%2 == 0 {
				m = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
			}
			cell := fmt.Sprintf("%.2f %s", m, r.unit)
			if r.unit == "" { // a count
				cell = fmt.Sprintf("%.0f", m)
			}
			if never {
				cell = "never (killed after 5 s)"
			}
			fmt.Printf(" %s |", cell)
			if i == 0 {
				base = m
			} else if m > 0 && !never {
				fmt.Printf(" %.2f× |", base/m)
			} else {
				fmt.Print(" – |")
			}
		}
		fmt.Println()
	}
	// Paired ratios: round by round, so a drift in machine speed cancels.
	for i := 1; i < len(specs); i++ {
		var rs []float64
		for k := range samples[0] {
			if samples[i][k].init > 0 {
				rs = append(rs, float64(samples[0][k].init)/float64(samples[i][k].init))
			}
		}
		slices.Sort(rs)
		if len(rs) > 0 {
			fmt.Printf("\nspawn → initialize, paired ratio %s / %s: median %.2f× (min %.2f×, max %.2f×)\n",
				specs[0].name, specs[i].name, rs[len(rs)/2], rs[0], rs[len(rs)-1])
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "compare: "+format+"\n", args...)
	os.Exit(2)
}
