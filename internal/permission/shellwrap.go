package permission

import (
	"strings"
	"sync"
)

// Commands that run other commands: wrappers (sudo, env, xargs, find
// -exec) whose inner command is a command of the program too, and the
// builtins and interpreters that run a string (eval, trap, sh -c).

// evalBody is the string eval, trap or watch runs.
func evalBody(name string, args []shellWord) (string, bool) {
	var parts []string
	switch name {
	case "trap":
		rest := skipOptions(args, nil)
		if len(rest) == 0 || rest[0].val == "-" {
			return "", true
		}
		rest = rest[:1]
		args = rest
	case "watch":
		args = skipOptions(args, map[string]bool{"-n": true, "--interval": true, "-q": true, "--equexit": true})
	}
	for _, a := range args {
		if !a.static {
			return "", false
		}
		parts = append(parts, a.val)
	}
	return strings.Join(parts, " "), true
}

// interpreterBody finds the -c string of sh, bash and the like; ok is false
// when the shell reads a script file or standard input instead.
func interpreterBody(args []shellWord) (shellWord, bool) {
	hasC := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return a, hasC
		}
		switch {
		case a.val == "--" || a.val == "-":
			if hasC && i+1 < len(args) {
				return args[i+1], true
			}
			return shellWord{}, false
		case a.val == "-o" || a.val == "+o" || a.val == "-O" || a.val == "+O" || a.val == "--rcfile" || a.val == "--init-file":
			i++
		case strings.HasPrefix(a.val, "--"):
			// --norc, --login, --posix ...
		case strings.HasPrefix(a.val, "-") || strings.HasPrefix(a.val, "+"):
			if strings.ContainsRune(a.val[1:], 'c') {
				hasC = true
			}
			if strings.HasSuffix(a.val, "o") || strings.HasSuffix(a.val, "O") {
				i++ // -euo pipefail: the option name follows
			}
		default:
			if hasC {
				return a, true
			}
			return shellWord{}, false
		}
	}
	return shellWord{}, false
}

// wrapperOptions lists, for commands that run another command, the options
// that take a value (so the value is not mistaken for the command).
var wrapperOptions = sync.OnceValue(func() map[string]map[string]bool {
	return map[string]map[string]bool{
		"command": {}, "builtin": {}, "nohup": {}, "setsid": {}, "time": {}, "busybox": {},
		"exec":    {"-a": true},
		"env":     {"-u": true, "--unset": true, "-C": true, "--chdir": true, "-S": true, "--split-string": true},
		"sudo":    {"-u": true, "-g": true, "-C": true, "-D": true, "-h": true, "-p": true, "-r": true, "-t": true, "-U": true, "-T": true, "-R": true},
		"doas":    {"-u": true, "-C": true},
		"nice":    {"-n": true, "--adjustment": true},
		"ionice":  {"-c": true, "-n": true, "-p": true, "-P": true, "-u": true},
		"stdbuf":  {"-i": true, "-o": true, "-e": true},
		"timeout": {"-s": true, "--signal": true, "-k": true, "--kill-after": true},
		"xargs":   {"-I": true, "-L": true, "-n": true, "-P": true, "-s": true, "-d": true, "-E": true, "-a": true, "--arg-file": true, "--delimiter": true, "--max-args": true, "--max-procs": true, "--replace": true},
		"flock":   {"-w": true, "--timeout": true, "-E": true, "-c": true, "--command": true},
		"chroot":  {"--userspec": true, "--groups": true},
	}
})

// unwrap returns the command a wrapper runs (sudo rm -rf x → rm -rf x);
// ok is false for commands that are not wrappers.
func unwrap(name string, args []shellWord) ([]shellWord, bool) {
	if name == "find" {
		return findExec(args), true
	}
	opts, ok := wrapperOptions()[name]
	if !ok {
		return nil, false
	}
	rest := skipOptions(args, opts)
	switch name {
	case "env":
		for len(rest) > 0 && rest[0].static && isAssignment(rest[0].val) {
			rest = rest[1:]
		}
	case "timeout":
		if len(rest) > 0 {
			rest = rest[1:] // the duration
		}
	case "chroot", "flock":
		if len(rest) > 0 {
			rest = rest[1:] // the new root, the lock file
		}
	}
	return rest, true
}

// skipOptions drops leading options; opts says which take a value.
func skipOptions(args []shellWord, opts map[string]bool) []shellWord {
	for i := 0; i < len(args); i++ {
		v := args[i].val
		if v == "--" {
			return args[i+1:]
		}
		if !strings.HasPrefix(v, "-") || v == "-" || !args[i].static {
			return args[i:]
		}
		if opts[v] && !strings.Contains(v, "=") {
			i++
		}
	}
	return nil
}

// findExec returns the command of find's -exec, -execdir, -ok or -okdir
// (the first one; find -exec ... -exec ... is rare enough to ask about as
// a whole, since the second stays among the arguments of the first).
func findExec(args []shellWord) []shellWord {
	for i, a := range args {
		switch a.val {
		case "-exec", "-execdir", "-ok", "-okdir":
			in := args[i+1:]
			for j, b := range in {
				if b.val == ";" || b.val == "+" {
					return in[:j]
				}
			}
			return in
		}
	}
	return nil
}
