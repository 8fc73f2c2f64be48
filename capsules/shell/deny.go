package shell

import (
	"path"
	"strings"
)

// The catastrophic-command deny list (spec/capsules-cli.md §5.3), checked
// before anyone is asked and overridden by no answer. It is a seatbelt
// against a model's slip, not a boundary against an adversary: bash can
// compute a command at run time (a variable's value, base64 -d | sh, a
// script file) that no reading of the text can see. The boundary is the
// person's approval of the exact command and the operator's host_process
// grant (docs/RATIONALE.md).

// protectedTop are the top-level directories that, with "/" and the home
// directory, may not be deleted, nor anything directly inside them.
var protectedTop = []string{
	"etc", "usr", "bin", "sbin", "var", "boot", "lib", "lib64", "lib32", "opt", "root", "home", "proc", "sys", "dev", "srv",
	"nix", "snap", "System", "Library", "Applications", "Users", "Volumes", "private",
}

// powerPrograms stop or wipe the machine whatever their arguments.
var powerPrograms = map[string]bool{
	"shutdown": true, "reboot": true, "halt": true, "poweroff": true, "init": true, "telinit": true,
	"mke2fs": true, "mkdosfs": true, "mkntfs": true,
}

// diskPrograms rewrite a disk when given a device.
var diskPrograms = map[string]bool{
	"fdisk": true, "sfdisk": true, "gdisk": true, "sgdisk": true, "parted": true, "wipefs": true,
	"mkswap": true, "shred": true, "blkdiscard": true, "cryptsetup": true,
}

// copyPrograms write to the files they are given, a device included.
var copyPrograms = map[string]bool{"tee": true, "cp": true, "install": true, "truncate": true, "rsync": true, "ddrescue": true, "sponge": true}

// shells run a command string given with -c.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true, "busybox-sh": true}

// wrappers run the command that follows their options; valueFlags are
// the options that take the next word as their value, positional how many
// words follow the options before the command (timeout's duration).
type wrapper struct {
	valueFlags []string
	positional int
}

var wrappers = map[string]wrapper{
	"sudo":       {valueFlags: []string{"-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D", "-R", "--user", "--group", "--close-from", "--host", "--prompt", "--role", "--type", "--other-user", "--chdir", "--chroot"}},
	"doas":       {valueFlags: []string{"-u", "-C"}},
	"env":        {valueFlags: []string{"-u", "-C", "--unset", "--chdir"}},
	"command":    {},
	"builtin":    {},
	"exec":       {valueFlags: []string{"-a"}},
	"nohup":      {},
	"setsid":     {},
	"nice":       {valueFlags: []string{"-n", "--adjustment"}},
	"ionice":     {valueFlags: []string{"-c", "-n", "-p", "--class", "--classdata"}},
	"timeout":    {valueFlags: []string{"-s", "-k", "--signal", "--kill-after"}, positional: 1},
	"stdbuf":     {valueFlags: []string{"-i", "-o", "-e"}},
	"chrt":       {valueFlags: []string{"-T", "-P", "-D"}, positional: 1},
	"taskset":    {valueFlags: []string{"-c", "--cpu-list"}, positional: 1},
	"xargs":      {valueFlags: []string{"-n", "-I", "-d", "-L", "-P", "-s", "-a", "-E", "--max-args", "--delimiter", "--max-procs", "--arg-file"}},
	"time":       {valueFlags: []string{"-f", "-o", "--format", "--output"}},
	"unbuffer":   {},
	"busybox":    {},
	"flock":      {valueFlags: []string{"-w", "-E", "--timeout", "--conflict-exit-code"}, positional: 1},
	"caffeinate": {valueFlags: []string{"-t", "-w"}},
}

// maxShellNesting bounds sh -c inside sh -c inside eval ...: deeper is
// refused rather than guessed.
const maxShellNesting = 8

// denyReason says why command may never run, or "".
func denyReason(command string) string {
	return checkText(command, "", 0)
}

func checkText(command, cwd string, depth int) string {
	if depth > maxShellNesting {
		return "it nests shells and substitutions too deep to check"
	}
	if forkBomb(command) {
		return "it is a fork bomb (a function that pipes into itself in the background)"
	}
	segs, nested, tooDeep := parse(command)
	if tooDeep {
		return "it nests substitutions too deep to check"
	}
	for _, n := range nested {
		if why := checkText(n, cwd, depth+1); why != "" {
			return why
		}
	}
	for _, s := range segs {
		if cwd != "" && s.cwd == "" {
			s.cwd = cwd
		}
		if why := checkSegment(s, depth); why != "" {
			return why
		}
	}
	return ""
}

func checkSegment(s *segment, depth int) string {
	for _, r := range s.redirects {
		if isDevice(r.text) {
			return "it writes to the device " + r.text
		}
	}
	words := s.words
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	return checkCommand(words, s, depth)
}

// isAssignment reports NAME=value before a command.
func isAssignment(w word) bool {
	eq := strings.IndexByte(w.text, '=')
	if eq <= 0 || (w.quotedAt >= 0 && w.quotedAt < eq) {
		return false
	}
	for i := 0; i < eq; i++ {
		c := w.text[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// program is the command name of w: its last path element.
func program(w word) string {
	if w.text == "" {
		return ""
	}
	return path.Base(w.text)
}

func checkCommand(words []word, s *segment, depth int) string {
	if len(words) == 0 {
		return ""
	}
	prog, args := program(words[0]), words[1:]
	if words[0].onlyExpansion {
		// The program is computed at run time ($X -rf /): whatever it
		// is, it may not be handed a protected path.
		for _, a := range args {
			if p, ok := protectedPath(a, s.cwd); ok {
				return "a program computed at run time is given the protected path " + p
			}
		}
		return ""
	}
	if w, ok := wrappers[prog]; ok {
		if prog == "command" && hasFlag(args, "-v", "-V") {
			return "" // a lookup, not a run
		}
		rest, split := skipOptions(prog, w, args)
		if split != "" {
			if why := checkText(split, s.cwd, depth+1); why != "" {
				return why
			}
		}
		return checkCommand(rest, s, depth)
	}
	switch {
	case shells[prog] || prog == "su" || prog == "runuser" || prog == "watch":
		if cmd, ok := commandString(prog, args); ok {
			return checkText(cmd, s.cwd, depth+1)
		}
		for _, f := range s.feeds {
			if why := checkText(f, s.cwd, depth+1); why != "" {
				return why
			}
		}
		if from := s.pipedFrom; from != nil && len(from.words) > 0 {
			switch program(from.words[0]) {
			case "echo", "printf":
				if why := checkText(joinWords(from.words[1:]), s.cwd, depth+1); why != "" {
					return why
				}
			}
			for _, f := range from.feeds {
				if why := checkText(f, s.cwd, depth+1); why != "" {
					return why
				}
			}
		}
	case prog == "eval":
		return checkText(joinWords(args), s.cwd, depth+1)
	case powerPrograms[prog] || strings.HasPrefix(prog, "mkfs"):
		return "it runs " + prog + ", which stops or wipes the machine"
	case prog == "systemctl" || prog == "loginctl":
		for _, a := range args {
			switch a.text {
			case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "emergency", "rescue", "soft-reboot":
				return "it runs " + prog + " " + a.text + ", which stops the machine"
			}
		}
	case diskPrograms[prog] || copyPrograms[prog]:
		for _, a := range args {
			if isDevice(a.text) {
				return "it runs " + prog + " on the device " + a.text
			}
		}
	case prog == "dd":
		for _, a := range args {
			if of, ok := strings.CutPrefix(a.text, "of="); ok && isDevice(of) {
				return "it runs dd onto the device " + of
			}
		}
	case prog == "rm" || prog == "unlink" || prog == "rmdir" || prog == "srm":
		return checkRemove(prog, args, s.cwd)
	case prog == "chmod" || prog == "chown" || prog == "chgrp" || prog == "chattr" || prog == "setfacl":
		if recursive(args, "R") {
			for _, a := range operands(args) {
				if p, ok := protectedPath(a, s.cwd); ok {
					return "it runs " + prog + " -R on the protected path " + p
				}
			}
		}
	case prog == "mv":
		ops := operands(args)
		for i, a := range ops {
			if p, ok := protectedPath(a, s.cwd); ok && i < len(ops)-1 {
				return "it moves the protected path " + p
			}
		}
	case prog == "find":
		return checkFind(args, s, depth)
	case prog == "kill" || prog == "pkill" || prog == "killall":
		for i, a := range args {
			if (a.text == "-1" && i > 0) || a.text == "1" && prog == "kill" {
				return "it signals every process (" + prog + " " + joinWords(args) + ")"
			}
		}
	}
	return ""
}

// checkRemove refuses rm of a protected path, and rm -r of a path only
// known at run time.
func checkRemove(prog string, args []word, cwd string) string {
	rec := recursive(args, "rR")
	for _, a := range operands(args) {
		if p, ok := protectedPath(a, cwd); ok {
			return "it runs " + prog + " on the protected path " + p
		}
		if rec && a.onlyExpansion && a.substituted {
			return "it runs " + prog + " -r on paths computed at run time ($( ) or backticks), which cannot be checked; name the paths"
		}
	}
	return ""
}

// checkFind refuses find -delete (or -exec) from a protected path and
// checks each -exec command with {} as each starting path.
func checkFind(args []word, s *segment, depth int) string {
	var roots []word
	i := 0
	for ; i < len(args); i++ {
		t := args[i].text
		if strings.HasPrefix(t, "-") || t == "(" || t == "!" || t == ")" {
			break
		}
		roots = append(roots, args[i])
	}
	if len(roots) == 0 {
		roots = []word{{text: ".", quotedAt: -1}}
	}
	for ; i < len(args); i++ {
		switch args[i].text {
		case "-delete":
			for _, r := range roots {
				if p, ok := protectedPath(r, s.cwd); ok {
					return "it runs find -delete from the protected path " + p
				}
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].text != ";" && args[j].text != "+" {
				j++
			}
			for _, r := range roots {
				cmd := make([]word, 0, j-i-1)
				for _, w := range args[i+1 : j] {
					if w.text == "{}" {
						w = r
					}
					cmd = append(cmd, w)
				}
				if why := checkCommand(cmd, s, depth); why != "" {
					return why
				}
			}
			i = j
		}
	}
	return ""
}

// skipOptions returns the command a wrapper runs, and the string of env -S
// (a command line of its own).
func skipOptions(prog string, w wrapper, args []word) (rest []word, split string) {
	i := 0
	for i < len(args) {
		t := args[i].text
		if t == "--" {
			i++
			break
		}
		if prog == "env" && isAssignment(args[i]) {
			i++
			continue
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			break
		}
		if prog == "env" && (t == "-S" || t == "--split-string") && i+1 < len(args) {
			split = args[i+1].text
			i += 2
			continue
		}
		if prog == "env" && strings.HasPrefix(t, "-S") && len(t) > 2 {
			split = t[2:]
			i++
			continue
		}
		if contains(w.valueFlags, t) {
			i += 2
			continue
		}
		i++
	}
	for n := 0; n < w.positional && i < len(args); n++ {
		i++
	}
	if i > len(args) {
		i = len(args)
	}
	return args[i:], split
}

// commandString finds the command text a shell (or su, or watch) is
// given: sh -c TEXT, bash -lc TEXT, su -c TEXT; watch runs all its
// operands through sh -c.
func commandString(prog string, args []word) (string, bool) {
	if prog == "watch" {
		i := 0
		for i < len(args) && strings.HasPrefix(args[i].text, "-") {
			if contains([]string{"-n", "-d", "--interval", "-g"}, args[i].text) {
				i++
			}
			i++
		}
		if i >= len(args) {
			return "", false
		}
		return joinWords(args[i:]), true
	}
	dashC := false
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--command" || t == "-c" || (strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.Contains(t, "c")):
			dashC = true
		case t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file" || t == "-s" && prog == "su":
			i++
		case strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+"):
		default:
			if dashC {
				return t, true
			}
			if prog != "su" && prog != "runuser" {
				return "", false // a script file: not readable from here
			}
		}
	}
	return "", false
}

// recursive reports a short flag holding one of letters, or --recursive.
func recursive(args []word, letters string) bool {
	for _, a := range args {
		t := a.text
		if t == "--" {
			return false
		}
		if t == "--recursive" {
			return true
		}
		if strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsAny(t[1:], letters) {
			return true
		}
	}
	return false
}

// operands are the arguments that are not options ("--" ends options).
func operands(args []word) []word {
	var out []word
	opts := true
	for _, a := range args {
		switch {
		case opts && a.text == "--":
			opts = false
		case opts && strings.HasPrefix(a.text, "-") && a.text != "-":
		default:
			out = append(out, a)
		}
	}
	return out
}

func hasFlag(args []word, flags ...string) bool {
	for _, a := range args {
		if contains(flags, a.text) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func joinWords(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

// harmlessDevices may be written to.
var harmlessDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/random", "/dev/urandom"}

// isDevice reports a path under /dev/ other than the harmless ones.
func isDevice(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	p = path.Clean(p)
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	if contains(harmlessDevices, p) {
		return false
	}
	for _, prefix := range []string{"/dev/fd/", "/dev/pts/", "/dev/shm/"} {
		if strings.HasPrefix(p, prefix) {
			return false
		}
	}
	return true
}

// maxBraceExpansions bounds the paths one word's braces expand to.
const maxBraceExpansions = 256

// protectedPath reports whether w names "/", a protected top-level
// directory, the home directory, anything exactly one level below one of
// them, or a path that climbs only upwards from the working directory.
// Braces and globs are taken into account; an unknown expansion counts
// as empty.
//
// It returns the path as resolved (braces expanded, joined to the working
// directory the cd commands before it led to), for the refusal to name.
func protectedPath(w word, cwd string) (string, bool) {
	for _, t := range braces(w.text, maxBraceExpansions) {
		if t == "" {
			continue
		}
		if cwd == unknownCwd {
			// cd $X may have gone home (X empty): check both.
			if home := joinCwd("~", t); protectedText(home) {
				return home + " (if the cd before it went home)", true
			}
			if protectedText(t) {
				return t, true
			}
			continue
		}
		if full := joinCwd(cwd, t); protectedText(full) {
			return full, true
		}
	}
	return "", false
}

// joinCwd resolves t against the working directory cwd ("" is the
// starting one, which the deny list does not know).
func joinCwd(cwd, t string) string {
	if strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") || cwd == "" || cwd == unknownCwd {
		return t
	}
	return cwd + "/" + t
}

func protectedText(t string) bool {
	switch {
	case strings.HasPrefix(t, "~"):
		rest := t[1:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[i:] // ~user/x: the part after the user
		} else {
			rest = ""
		}
		return len(components("/"+rest)) <= 1
	case strings.HasPrefix(t, "/"):
		comps := components(t)
		switch len(comps) {
		case 0, 1:
			return true
		case 2:
			return matchesProtected(comps[0])
		}
		return false
	}
	// Relative: only ../.. (and a glob under it) is known to leave the
	// working directory for somewhere bigger.
	comps := strings.Split(path.Clean(t), "/")
	if comps[0] != ".." {
		return false
	}
	for i, c := range comps {
		if c != ".." && (i != len(comps)-1 || !strings.ContainsAny(c, "*?[")) {
			return false
		}
	}
	return true
}

// components are the elements of the cleaned absolute path p.
func components(p string) []string {
	p = path.Clean(p)
	if p == "/" {
		return nil
	}
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}

// matchesProtected reports whether the top-level name (or glob) c is, or
// may match, a protected top-level directory.
func matchesProtected(c string) bool {
	for _, name := range protectedTop {
		if strings.EqualFold(c, name) {
			return true
		}
		if ok, err := path.Match(strings.ToLower(c), strings.ToLower(name)); err == nil && ok {
			return true
		}
	}
	return false
}

// braces expands bash brace alternatives ({a,b}) in s, breadth first, up
// to limit results; past it the words not yet expanded are returned as
// they are (and checked as text), so the work stays bounded whatever the
// nesting.
func braces(s string, limit int) []string {
	var out []string
	queue := []string{s}
	for len(queue) > 0 {
		if len(out)+len(queue) > limit {
			return append(out, queue...)
		}
		x := queue[0]
		queue = queue[1:]
		prefix, alts, suffix, ok := firstBraceGroup(x)
		if !ok {
			out = append(out, x)
			continue
		}
		for _, a := range alts {
			queue = append(queue, prefix+a+suffix)
		}
	}
	return out
}

// firstBraceGroup finds the first {a,b,...} of s (a brace pair with a
// comma at its own level).
func firstBraceGroup(s string) (prefix string, alts []string, suffix string, ok bool) {
	for open := strings.IndexByte(s, '{'); open >= 0; {
		depth, end := 0, -1
		var commas []int
		for i := open; i < len(s) && end < 0; i++ {
			switch s[i] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					end = i
				}
			case ',':
				if depth == 1 {
					commas = append(commas, i)
				}
			}
		}
		if end < 0 {
			return "", nil, "", false
		}
		if len(commas) > 0 {
			prev := open + 1
			for _, c := range append(commas, end) {
				alts = append(alts, s[prev:c])
				prev = c + 1
			}
			return s[:open], alts, s[end+1:], true
		}
		next := strings.IndexByte(s[open+1:], '{')
		if next < 0 {
			break
		}
		open += 1 + next
	}
	return "", nil, "", false
}

// forkBomb finds a function that pipes into itself: the classic
// :(){ :|:& };: and its spellings with other names or "function".
func forkBomb(command string) bool {
	s := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, command)
	for i := 0; i < len(s); i++ {
		if s[i] != '{' {
			continue
		}
		name := strings.TrimSuffix(s[:i], "()")
		j := len(name)
		for j > 0 && !strings.ContainsRune(";&|(){}`$\"'", rune(name[j-1])) {
			j--
		}
		name = strings.TrimPrefix(name[j:], "function")
		if name == "" {
			continue
		}
		body := s[i+1:]
		if end := strings.IndexByte(body, '}'); end >= 0 {
			body = body[:end]
		}
		if strings.Contains(body, name+"|"+name) || strings.Contains(body, name+"&"+name) {
			return true
		}
	}
	return false
}
