package shell

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The catastrophic-command deny list (spec/capsules-cli.md §5.3), checked
// before anyone is asked and overridden by no answer.
//
// It is a seatbelt, not the boundary. It catches a model's slip
// (rm -rf ~/ for rm -rf ./) and the plain spellings of a catastrophe, read
// off the program mvdan.cc/sh/v3/syntax parses from the command line; bash
// can still compute a command no reading of the text can see (base64 -d |
// sh, a script written a minute before). What a command can reach is
// decided by the operating system: the host runs it confined to the
// capsule's grants (docs/rationale/sandbox.md: "Why does the shell still have a
// deny list when commands are confined?"), and the person approves the
// exact command.
//
// Every input gets a decision: a command line that does not parse is
// refused with the parser's line:col and message, and a word whose value
// cannot be known before the command runs is refused where it would
// matter (the program name, a path given to rm, truncate, cp, mv, dd, tee
// or find -delete, a redirection's target), and only there.

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

// maxHops bounds wrappers around wrappers (sudo env nice xargs ...).
const maxHops = 64

// maxCwds bounds the working directories a command line may be taken to
// be in after its cd commands; past it, it may be anywhere.
const maxCwds = 16

// unknownCwd is a working directory the deny list cannot know (cd "$X").
const unknownCwd = "\x00cwd"

// maxNestedTexts bounds how many command texts (sh -c strings, eval
// arguments, each value they may take) one command line may make the
// checker parse again; past it the command is refused as too complex.
const maxNestedTexts = 1024

// panicPrefix starts the refusal of a command the checker itself failed
// on; the fuzz test fails on it.
const panicPrefix = "the deny list failed to check it"

// denyReason says why command may never run, or "".
func denyReason(command string) (why string) {
	defer func() {
		if r := recover(); r != nil {
			why = fmt.Sprintf("%s (%v)", panicPrefix, r)
		}
	}()
	budget := maxNestedTexts
	return checkScript(command, "", nil, []string{""}, 0, &budget)
}

// checkScript parses src as bash and checks every command in it. what
// names where a nested text came from ("bash -c", "eval"); vars and cwds
// are what the text that ran it knew; budget counts down the texts
// parsed.
func checkScript(src, what string, vars map[string][]string, cwds []string, depth int, budget *int) string {
	if depth > maxShellNesting {
		return "it nests shells, eval and sh -c strings too deep to check"
	}
	if *budget--; *budget < 0 {
		return "it makes too many command texts (sh -c, eval) to check"
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		if what == "" {
			return "it cannot be parsed as bash (" + err.Error() + "), and a command line that cannot be read cannot be checked"
		}
		return "the command text given to " + what + " cannot be parsed as bash (" + err.Error() + "), so it cannot be checked"
	}
	c := &checker{src: src, depth: depth, vars: map[string][]string{}, cwds: cwds, budget: budget}
	for k, v := range vars {
		c.vars[k] = v
	}
	syntax.Walk(f, c.visit)
	if c.why != "" && what != "" {
		return c.why + " (in the command text given to " + what + ")"
	}
	return c.why
}

// checker walks one parsed command line, in order, keeping what it
// learns on the way: variables set, the working directory after cd.
type checker struct {
	src   string
	depth int
	// vars are the values each variable set so far may have.
	vars map[string][]string
	// cwds are the working directories the command may be in ("" the
	// starting one, unknownCwd one the text does not tell).
	cwds   []string
	stack  []syntax.Node
	why    string
	budget *int
}

// arg is one word of a command: the values it may take, and its text in
// the command line, for a refusal to quote.
type arg struct {
	alts []string
	src  string
}

// text is the one known value of a.
func (a arg) text() (string, bool) { return single(a.alts) }

func (a arg) is(s string) bool {
	t, ok := a.text()
	return ok && t == s
}

// option reports an argument that is an option whatever its value.
func (a arg) option() bool {
	for _, v := range a.alts {
		if !strings.HasPrefix(v, "-") || v == "-" || strings.HasPrefix(v, "-"+unknown) {
			return false
		}
	}
	return len(a.alts) > 0
}

func (c *checker) visit(n syntax.Node) bool {
	if c.why != "" {
		return false
	}
	if n == nil {
		c.stack = c.stack[:len(c.stack)-1]
		return true
	}
	c.stack = append(c.stack, n)
	switch x := n.(type) {
	case *syntax.Stmt:
		c.why = c.redirects(x)
	case *syntax.CallExpr:
		c.call(x)
	case *syntax.DeclClause:
		for _, a := range x.Args {
			c.assign(a)
		}
	case *syntax.ForClause:
		if it, ok := x.Loop.(*syntax.WordIter); ok {
			v := []string{unknown} // for x; do: the positional parameters
			if len(it.Items) > 0 || it.InPos.IsValid() {
				v = nil
				for _, w := range it.Items {
					v = union(v, c.resolve(w, true))
				}
			}
			c.setVar(it.Name.Value, v, c.definite())
		}
	case *syntax.FuncDecl:
		c.why = c.forkBomb(x)
	}
	if c.why != "" {
		// Walk calls f(nil) only for nodes it entered; it stops here.
		return false
	}
	return true
}

// definite reports whether the node on top of the stack runs, when the
// command line gets there, every time and in this shell: not in a branch,
// loop, function, pipeline, subshell, substitution or background job, nor
// on the right of && or ||.
func (c *checker) definite() bool {
	for i, n := range c.stack[:len(c.stack)-1] {
		switch x := n.(type) {
		case *syntax.File, *syntax.Block:
		case *syntax.Stmt:
			if x.Background || x.Coprocess {
				return false
			}
		case *syntax.BinaryCmd:
			if (x.Op != syntax.AndStmt && x.Op != syntax.OrStmt) || c.stack[i+1] != x.X {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// setVar records the values of name: replaced where the assignment
// always runs, added to the old ones where it may not.
func (c *checker) setVar(name string, v []string, definite bool) {
	if !definite {
		v = union(c.lookup(name), v)
	}
	c.vars[name] = v
}

func (c *checker) assign(a *syntax.Assign) {
	if a.Name == nil || a.Naked {
		return
	}
	v := []string{unknown}
	if a.Array == nil && a.Index == nil {
		v = c.resolve(a.Value, false)
	}
	if a.Append {
		v = product(c.lookup(a.Name.Value), v)
	}
	c.setVar(a.Name.Value, v, c.definite())
}

// setCwds records the working directories after a cd, as setVar does.
func (c *checker) setCwds(v []string) {
	if !c.definite() {
		v = union(c.cwds, v)
	}
	if len(v) > maxCwds {
		v = []string{"", unknownCwd}
	}
	c.cwds = v
}

// wordText is w as written in the command line.
func (c *checker) wordText(w *syntax.Word) string {
	start, end := int(w.Pos().Offset()), int(w.End().Offset())
	if start < 0 || end > len(c.src) || start > end {
		return "a word"
	}
	return c.src[start:end]
}

func (c *checker) args(ws []*syntax.Word) []arg {
	out := make([]arg, len(ws))
	for i, w := range ws {
		out[i] = arg{alts: c.resolve(w, true), src: c.wordText(w)}
	}
	return out
}

// call checks a simple command and records what it changes (variables,
// the working directory).
func (c *checker) call(x *syntax.CallExpr) {
	if len(x.Args) == 0 {
		for _, a := range x.Assigns {
			c.assign(a)
		}
		return
	}
	args := c.args(x.Args)
	if c.why = c.command(args, 0); c.why != "" {
		return
	}
	c.effects(args)
}

// effects records what a command changes for those after it.
func (c *checker) effects(args []arg) {
	prog, ok := args[0].text()
	if !ok {
		return
	}
	switch prog {
	case "cd", "pushd":
		var target *arg
		for i := 1; i < len(args); i++ {
			if args[i].is("--") || args[i].option() {
				continue
			}
			target = &args[i]
			break
		}
		if target == nil {
			c.setCwds([]string{"~"})
			return
		}
		var next []string
		for _, d := range c.cwds {
			for _, t := range target.alts {
				switch {
				case strings.Contains(t, unknown) || t == "-":
					next = union(next, []string{unknownCwd})
				case t == "":
					next = union(next, []string{d})
				default:
					next = union(next, []string{joinCwd(d, t)})
				}
			}
		}
		c.setCwds(next)
	case "popd":
		c.setCwds([]string{unknownCwd})
	case "unset":
		for _, a := range args[1:] {
			if t, ok := a.text(); ok && isName(t) {
				c.setVar(t, []string{""}, c.definite())
			}
		}
	case "read", "mapfile", "readarray", "getopts", "printf":
		for _, a := range args[1:] {
			if t, ok := a.text(); ok && isName(t) {
				c.setVar(t, []string{unknown}, false)
			}
		}
	}
}

func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch == '_' || ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return s != ""
}

// isAssignment reports NAME=value (as env takes it).
func isAssignment(t string) bool {
	name, _, ok := strings.Cut(t, "=")
	return ok && isName(name)
}

// command checks the command args: its program name must be known, and
// the program is checked with its arguments.
func (c *checker) command(args []arg, hops int) string {
	if len(args) == 0 {
		return ""
	}
	if hops > maxHops {
		return "it wraps commands in commands too deep to check"
	}
	head := args[0]
	for _, v := range head.alts {
		if v == "" {
			// An empty unquoted expansion vanishes: the next word is the
			// program.
			if why := c.command(args[1:], hops+1); why != "" {
				return why
			}
			continue
		}
		prog := path.Base(v)
		if strings.Contains(prog, unknown) {
			return "its program name " + head.src + " could not be resolved before it runs, so what it runs cannot be checked; name the program"
		}
		if why := c.program(prog, args[1:], hops); why != "" {
			return why
		}
	}
	return ""
}

// program checks one program with its arguments.
func (c *checker) program(prog string, args []arg, hops int) string {
	if prog == "xargs" {
		return c.xargs(args, hops)
	}
	if w, ok := wrappers[prog]; ok {
		if prog == "command" && (hasArg(args, "-v") || hasArg(args, "-V")) {
			return "" // a lookup, not a run
		}
		rest, split := skipOptions(prog, w, args)
		if split != nil {
			if why := c.nested(*split, "env -S", hops); why != "" {
				return why
			}
		}
		return c.command(rest, hops+1)
	}
	for _, a := range args {
		for _, v := range a.alts {
			if (diskPrograms[prog] || copyPrograms[prog]) && isDevice(v) {
				return "it runs " + prog + " on the device " + v
			}
		}
	}
	switch {
	case shells[prog] || prog == "su" || prog == "runuser" || prog == "watch" || prog == "script":
		if script, ok := commandString(prog, args); ok {
			return c.nested(script, prog+" -c", hops)
		}
		texts, _ := c.input()
		for _, t := range texts {
			if why := c.nested(arg{alts: []string{t}, src: "its input"}, prog+" (its input)", hops); why != "" {
				return why
			}
		}
	case prog == "eval":
		return c.nested(arg{alts: joinArgs(args), src: "its arguments"}, "eval", hops)
	case powerPrograms[prog] || strings.HasPrefix(prog, "mkfs"):
		return "it runs " + prog + ", which stops or wipes the machine"
	case prog == "systemctl" || prog == "loginctl":
		for _, a := range args {
			for _, v := range a.alts {
				switch v {
				case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "emergency", "rescue", "soft-reboot":
					return "it runs " + prog + " " + v + ", which stops the machine"
				}
			}
		}
	case prog == "dd":
		for _, a := range args {
			var of []string
			for _, v := range a.alts {
				if o, ok := strings.CutPrefix(v, "of="); ok {
					if isDevice(o) {
						return "it runs dd onto the device " + o
					}
					of = append(of, o)
				}
			}
			if why := c.writeWhy("runs dd onto", arg{alts: of, src: a.src}); why != "" {
				return why
			}
		}
	case prog == "rm" || prog == "unlink" || prog == "rmdir" || prog == "srm" || prog == "shred":
		for _, a := range operands(args, nil) {
			if why := c.pathWhy("runs "+prog+" on", a); why != "" {
				return why
			}
		}
	case prog == "truncate":
		for _, a := range operands(args, []string{"-s", "-r", "--size", "--reference"}) {
			if why := c.writeWhy("truncates", a); why != "" {
				return why
			}
		}
	case prog == "tee" || prog == "sponge":
		if hasArg(args, "-a") || hasArg(args, "--append") {
			break
		}
		for _, a := range operands(args, nil) {
			if why := c.writeWhy("writes ("+prog+") onto", a); why != "" {
				return why
			}
		}
	case prog == "chmod" || prog == "chown" || prog == "chgrp" || prog == "chattr" || prog == "setfacl":
		if recursive(args, "R") {
			ops := operands(args, []string{"-m", "-x", "-M", "-X", "--reference"})
			if prog != "setfacl" && len(ops) > 0 && !hasPrefixArg(args, "--reference") {
				ops = ops[1:] // the mode or owner
			}
			for _, a := range ops {
				if why := c.pathWhy("runs "+prog+" -R on", a); why != "" {
					return why
				}
			}
		}
	case prog == "mv" || prog == "cp" || prog == "install" || prog == "ln" || prog == "rsync":
		return c.copyWhy(prog, args)
	case prog == "find":
		return c.find(args, hops)
	case prog == "kill" || prog == "pkill" || prog == "killall":
		for i, a := range args {
			if (a.is("-1") && i > 0) || a.is("1") && prog == "kill" {
				return "it signals every process (" + prog + " " + joinSrc(args) + ")"
			}
		}
	}
	return ""
}

// nested checks the values of script as command lines of their own (sh
// -c, eval, env -S, what is piped into a shell).
func (c *checker) nested(script arg, what string, hops int) string {
	for _, v := range script.alts {
		if strings.Trim(v, unknown+" \t\n") == "" && strings.Contains(v, unknown) {
			return "it runs " + script.src + " as a command line (" + what + "), and its text could not be resolved before it runs, so it cannot be checked"
		}
		vars := make(map[string][]string, len(c.vars)+1)
		for k, x := range c.vars {
			vars[k] = x
		}
		delete(vars, unresolvedName)
		text := strings.ReplaceAll(v, unknown, "${"+unresolvedName+"}")
		if why := checkScript(text, what, vars, c.cwds, c.depth+1, c.budget); why != "" {
			return why
		}
	}
	return ""
}

// pathWhy refuses a path operand in a dangerous position: a protected
// path, or a value that could not be resolved and may be one.
func (c *checker) pathWhy(verb string, a arg) string {
	for _, v := range a.alts {
		if p, ok := c.protected(v); ok && !strings.Contains(v, unknown) {
			return "it " + verb + " the protected path " + p
		}
	}
	for _, v := range a.alts {
		if !strings.Contains(v, unknown) {
			continue
		}
		if p, ok := c.protected(strings.ReplaceAll(v, unknown, "")); ok {
			return "it " + verb + " " + a.src + ", which could not be resolved before it runs and is the protected path " + p + " if its expansion is empty"
		}
	}
	for _, v := range a.alts {
		if strings.Contains(v, unknown) && !anchored(v) {
			return "it " + verb + " " + a.src + ", whose value could not be resolved before it runs (an expansion there is refused unless the path starts with a named directory); name the path"
		}
	}
	return ""
}

// writeWhy is pathWhy for a path written to: the harmless devices
// (/dev/null, /dev/stderr, /dev/fd/N) may be.
func (c *checker) writeWhy(verb string, a arg) string {
	var paths []string
	for _, v := range a.alts {
		if !harmlessTarget(v) {
			paths = append(paths, v)
		}
	}
	return c.pathWhy(verb, arg{alts: paths, src: a.src})
}

// protected checks t against every working directory the command may be in.
func (c *checker) protected(t string) (string, bool) {
	for _, d := range c.cwds {
		if p, ok := protectedPath(t, d); ok {
			return p, true
		}
	}
	return "", false
}

// anchored reports whether the literal text before the first unknown part
// of v starts with a named directory (build/$X, /tmp/astrid/$X), so the
// path stays under it whatever the expansion gives; $X, ./$X, ../$X, /$X
// and ~/$X are not.
func anchored(v string) bool {
	prefix, _, _ := strings.Cut(v, unknown)
	for strings.HasPrefix(prefix, "./") {
		prefix = prefix[2:]
	}
	if strings.HasPrefix(prefix, "~") {
		i := strings.IndexByte(prefix, '/')
		if i < 0 {
			return false
		}
		prefix = prefix[i:]
	}
	prefix = strings.TrimLeft(prefix, "/")
	first, _, _ := strings.Cut(prefix, "/")
	return first != "" && first != "." && first != ".." && !strings.HasPrefix(first, "-")
}

// redirects checks the targets the statement writes to: no device, and,
// unless it only appends, no protected or unresolved path.
func (c *checker) redirects(st *syntax.Stmt) string {
	for _, r := range st.Redirs {
		appendOnly := false
		switch r.Op {
		case syntax.AppOut, syntax.AppClob, syntax.AppAll, syntax.AppAllClob:
			appendOnly = true
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrInOut, syntax.RdrAll, syntax.RdrAllClob, syntax.DplOut:
		default:
			continue
		}
		vals := c.resolve(r.Word, false)
		if r.Op == syntax.DplOut {
			if t, ok := single(vals); ok && (t == "-" || strings.Trim(t, "0123456789") == "" || strings.Trim(t, "0123456789") == "-") {
				continue // >&2, >&-: a file descriptor
			}
		}
		for _, v := range vals {
			if isDevice(v) {
				return "it redirects output onto the device " + v
			}
		}
		if appendOnly {
			continue
		}
		if why := c.writeWhy("redirects output onto", arg{alts: vals, src: c.wordText(r.Word)}); why != "" {
			return why
		}
	}
	return ""
}

// harmlessTarget is a redirection target under /dev that writes no file
// (/dev/null, /dev/stderr, /dev/fd/N, bash's /dev/tcp/...).
func harmlessTarget(v string) bool {
	p := path.Clean(v)
	if contains(harmlessDevices, p) {
		return true
	}
	for _, prefix := range []string{"/dev/fd/", "/dev/pts/", "/dev/tcp/", "/dev/udp/"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// copyWhy checks cp, mv, install, ln and rsync: mv may not move a protected
// path away, and none may write onto one. A destination that is a
// directory at the top (/, /tmp, ~) or ends in a slash is the directory a
// source lands in: cp x /tmp and cp cfg ~/.config/ are allowed, cp passwd
// /etc is not.
func (c *checker) copyWhy(prog string, args []arg) string {
	ops := operands(args, copyValueFlags[prog])
	var dest *arg
	for i, a := range args {
		if (a.is("-t") || a.is("--target-directory")) && i+1 < len(args) {
			dest = &args[i+1]
		}
		for _, v := range a.alts {
			if d, ok := strings.CutPrefix(v, "--target-directory="); ok {
				dest = &arg{alts: []string{d}, src: a.src}
			}
		}
	}
	srcs := ops
	if dest == nil {
		if len(ops) < 2 {
			return ""
		}
		dest, srcs = &ops[len(ops)-1], ops[:len(ops)-1]
	}
	if prog == "mv" {
		for _, s := range srcs {
			if why := c.pathWhy("moves", s); why != "" {
				return why
			}
		}
	}
	for _, d := range dest.alts {
		if prog == "rsync" && strings.Contains(strings.SplitN(d, "/", 2)[0], ":") {
			continue // host:path
		}
		if why := c.writeWhy("runs "+prog+" onto", arg{alts: []string{d}, src: dest.src}); why == "" || strings.Contains(d, unknown) || !topDirectory(d) && !strings.HasSuffix(d, "/") {
			if why != "" {
				return why
			}
			continue
		}
		for _, s := range srcs {
			for _, v := range s.alts {
				if strings.Contains(v, unknown) {
					return "it runs " + prog + " into " + d + " with " + s.src + ", whose value could not be resolved before it runs; name the path"
				}
				if why := c.pathWhy("runs "+prog+" onto", arg{alts: []string{strings.TrimSuffix(d, "/") + "/" + path.Base(v)}, src: dest.src}); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// copyValueFlags are the options of cp and its kin that take the next
// argument as their value.
var copyValueFlags = map[string][]string{
	"cp":      {"-t", "--target-directory", "-S", "--suffix"},
	"mv":      {"-t", "--target-directory", "-S", "--suffix"},
	"ln":      {"-t", "--target-directory", "-S", "--suffix"},
	"install": {"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"},
	"rsync":   {"-e", "--rsh", "-f", "--filter", "--exclude", "--include", "--exclude-from", "--include-from", "-T", "--temp-dir", "--backup-dir", "--chmod", "--chown"},
}

// topDirectory reports "/", a top-level directory or the home directory.
func topDirectory(d string) bool {
	if strings.HasPrefix(d, "~") {
		return !strings.Contains(strings.TrimRight(d, "/"), "/")
	}
	return strings.HasPrefix(d, "/") && len(components(d)) <= 1
}

// find refuses find -delete from a protected path and checks each -exec
// command with {} as each starting point.
func (c *checker) find(args []arg, hops int) string {
	var roots []arg
	i := 0
	for i < len(args) && (args[i].is("-H") || args[i].is("-L") || args[i].is("-P")) {
		i++
	}
	for ; i < len(args); i++ {
		if t, ok := args[i].text(); ok && (strings.HasPrefix(t, "-") || t == "(" || t == "!" || t == ")") {
			break
		}
		roots = append(roots, args[i])
	}
	if len(roots) == 0 {
		roots = []arg{{alts: []string{"."}, src: "."}}
	}
	for ; i < len(args); i++ {
		t, _ := args[i].text()
		switch t {
		case "-delete":
			for _, r := range roots {
				if why := c.pathWhy("runs find -delete from", r); why != "" {
					return why
				}
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && !args[j].is(";") && !args[j].is("+") {
				j++
			}
			for _, r := range roots {
				cmd := make([]arg, 0, j-i-1)
				for _, a := range args[i+1 : j] {
					if strings.Contains(strings.Join(a.alts, ""), "{}") {
						var alts []string
						for _, v := range a.alts {
							for _, rv := range r.alts {
								alts = union(alts, []string{strings.ReplaceAll(v, "{}", rv)})
							}
						}
						a = arg{alts: alts, src: r.src}
					}
					cmd = append(cmd, a)
				}
				if why := c.command(cmd, hops+1); why != "" {
					return why
				}
			}
			i = j
		}
	}
	return ""
}

// xargs runs its command with what it reads appended (or put in place of
// -I's string): echo's or printf's words, find's paths, a here-string;
// anything else is unknown, which the command's checks decide on.
func (c *checker) xargs(args []arg, hops int) string {
	rest, repl := xargsCommand(args)
	if len(rest) == 0 {
		return "" // it runs echo
	}
	in := arg{alts: []string{unknown}, src: "the input xargs reads"}
	if texts, ok := c.input(); ok {
		in.alts = nil
		for _, t := range texts {
			in.alts = union(in.alts, fields([]string{strings.NewReplacer(`"`, "", `'`, "").Replace(t)}, true))
		}
		in.src = "the words xargs reads (" + strings.Join(in.alts, " ") + ")"
	}
	if repl == "" {
		return c.command(append(rest[:len(rest):len(rest)], in), hops+1)
	}
	cmd := make([]arg, len(rest))
	for i, a := range rest {
		cmd[i] = a
		if strings.Contains(strings.Join(a.alts, ""), repl) {
			var alts []string
			for _, v := range a.alts {
				for _, x := range in.alts {
					alts = union(alts, []string{strings.ReplaceAll(v, repl, x)})
				}
			}
			cmd[i] = arg{alts: alts, src: in.src}
		}
	}
	return c.command(cmd, hops+1)
}

var xargsValueFlags = []string{"-n", "-d", "-L", "-P", "-s", "-a", "-E", "--max-args", "--delimiter", "--max-procs", "--arg-file", "--max-lines", "--max-chars", "--process-slot-var", "--eof"}

// xargsCommand returns xargs's command and its replacement string (-I).
func xargsCommand(args []arg) (rest []arg, repl string) {
	i := 0
	for i < len(args) {
		t, ok := args[i].text()
		if !ok || t == "-" || !strings.HasPrefix(t, "-") {
			break
		}
		if t == "--" {
			i++
			break
		}
		switch {
		case t == "-I":
			if i+1 < len(args) {
				repl, _ = args[i+1].text()
			}
			i += 2
			continue
		case strings.HasPrefix(t, "-I"):
			repl = t[2:]
		case t == "-i" || t == "--replace":
			repl = "{}"
		case strings.HasPrefix(t, "-i"):
			repl = t[2:]
		case strings.HasPrefix(t, "--replace="):
			repl = strings.TrimPrefix(t, "--replace=")
		case contains(xargsValueFlags, t):
			i += 2
			continue
		}
		i++
	}
	return args[min(i, len(args)):], repl
}

// input is what the command on top of the stack reads on its standard
// input, when the text tells: a here-string, a here-doc, or what the
// command before it in a pipe writes (echo, printf, find, cat of a
// here-doc). ok is false when it is not known.
func (c *checker) input() (texts []string, ok bool) {
	n := len(c.stack)
	if n < 2 {
		return nil, false
	}
	st, isStmt := c.stack[n-2].(*syntax.Stmt)
	if !isStmt {
		return nil, false
	}
	if texts, ok := c.feeds(st); ok {
		return texts, true
	}
	if n >= 3 {
		if b, isBin := c.stack[n-3].(*syntax.BinaryCmd); isBin && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && b.Y == st {
			return c.output(b.X)
		}
	}
	return nil, false
}

// feeds are the here-strings and here-docs of st.
func (c *checker) feeds(st *syntax.Stmt) (texts []string, ok bool) {
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.WordHdoc:
			texts, ok = union(texts, c.resolve(r.Word, false)), true
		case syntax.Hdoc, syntax.DashHdoc:
			texts, ok = union(texts, c.heredoc(r)), true
		case syntax.RdrIn:
			return nil, false
		}
	}
	return texts, ok
}

// heredoc is the body of a here-doc as the command reads it: expanded
// unless its delimiter is quoted.
func (c *checker) heredoc(r *syntax.Redirect) []string {
	if r.Hdoc == nil {
		return []string{""}
	}
	quoted := false
	for _, p := range r.Word.Parts {
		if l, ok := p.(*syntax.Lit); !ok || strings.Contains(l.Value, `\`) {
			quoted = true
		}
	}
	if !quoted {
		return c.resolveParts(r.Hdoc.Parts, doubleQuoted, false)
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		} else {
			return []string{unknown}
		}
	}
	return []string{noNUL(b.String())}
}

// output is what the last command of st writes, when the text tells.
func (c *checker) output(st *syntax.Stmt) ([]string, bool) {
	switch x := st.Cmd.(type) {
	case *syntax.BinaryCmd:
		if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
			return c.output(x.Y)
		}
	case *syntax.CallExpr:
		if len(x.Args) == 0 {
			return nil, false
		}
		prog, ok := single(c.resolve(x.Args[0], true))
		if !ok {
			return nil, false
		}
		args := c.args(x.Args[1:])
		switch path.Base(prog) {
		case "echo":
			return echoOutput(args), true
		case "printf":
			if len(args) == 0 {
				return nil, false
			}
			var out []string
			for _, f := range args[0].alts {
				out = union(out, []string{ansiC(f)})
			}
			for _, a := range args[1:] {
				out = union(out, a.alts)
			}
			return out, true
		case "find":
			return findOutput(args), true
		case "cat":
			if len(args) == 0 {
				return c.feeds(st)
			}
		}
	}
	return nil, false
}

// forkBomb refuses a function that calls itself at least twice with a
// pipe or a background job: :(){ :|:& };: and its spellings.
func (c *checker) forkBomb(f *syntax.FuncDecl) string {
	if f.Name == nil || f.Body == nil {
		return ""
	}
	name := f.Name.Value
	calls, spreads := 0, false
	syntax.Walk(f.Body, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			if len(x.Args) > 0 {
				if t, ok := single(c.resolve(x.Args[0], false)); ok && t == name {
					calls++
				}
			}
		case *syntax.BinaryCmd:
			spreads = spreads || x.Op == syntax.Pipe || x.Op == syntax.PipeAll
		case *syntax.Stmt:
			spreads = spreads || x.Background
		}
		return true
	})
	if calls >= 2 && spreads {
		return "it is a fork bomb (the function " + name + " runs itself more than once, piped or in the background)"
	}
	return ""
}

// skipOptions returns the command a wrapper runs, and the string of env -S
// (a command line of its own).
func skipOptions(prog string, w wrapper, args []arg) (rest []arg, split *arg) {
	i := 0
	for i < len(args) {
		t, ok := args[i].text()
		if !ok {
			break
		}
		if t == "--" {
			i++
			break
		}
		if prog == "env" && isAssignment(t) {
			i++
			continue
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			break
		}
		if prog == "env" && (t == "-S" || t == "--split-string") && i+1 < len(args) {
			s := args[i+1]
			split = &s
			i += 2
			continue
		}
		if prog == "env" && (strings.HasPrefix(t, "-S") || strings.HasPrefix(t, "--split-string=")) {
			v := strings.TrimPrefix(strings.TrimPrefix(t, "--split-string="), "-S")
			split = &arg{alts: []string{v}, src: args[i].src}
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
	return args[min(i, len(args)):], split
}

// commandString finds the command text a shell (or su, or script) is
// given: sh -c TEXT, bash -lc TEXT, su -c TEXT; watch runs all its
// operands through sh -c.
func commandString(prog string, args []arg) (arg, bool) {
	if prog == "watch" {
		i := 0
		for i < len(args) && args[i].option() {
			if t, _ := args[i].text(); contains([]string{"-n", "-d", "--interval", "-g"}, t) {
				i++
			}
			i++
		}
		if i >= len(args) {
			return arg{}, false
		}
		return arg{alts: joinArgs(args[i:]), src: joinSrc(args[i:])}, true
	}
	dashC := false
	for i := 0; i < len(args); i++ {
		t, ok := args[i].text()
		switch {
		case !ok:
			if dashC {
				return args[i], true
			}
			return arg{}, false
		case t == "--command" || t == "-c" || (strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.Contains(t, "c")):
			dashC = true
		case t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file" || t == "-s" && prog == "su":
			i++
		case strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+"):
		default:
			if dashC {
				return args[i], true
			}
			if prog != "su" && prog != "runuser" {
				return arg{}, false // a script file: not readable from here
			}
		}
	}
	return arg{}, false
}

// recursive reports a short flag holding one of letters, or --recursive.
func recursive(args []arg, letters string) bool {
	for _, a := range args {
		if a.is("--") {
			return false
		}
		for _, t := range a.alts {
			if t == "--recursive" || strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsAny(t[1:], letters) {
				return true
			}
		}
	}
	return false
}

// operands are the arguments that are not options ("--" ends options);
// valueFlags take the next argument as their value.
func operands(args []arg, valueFlags []string) []arg {
	var out []arg
	opts := true
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case opts && a.is("--"):
			opts = false
		case opts && a.option():
			if t, ok := a.text(); ok && contains(valueFlags, t) {
				i++
			}
		default:
			out = append(out, a)
		}
	}
	return out
}

func hasArg(args []arg, s string) bool {
	for _, a := range args {
		if a.is(s) {
			return true
		}
	}
	return false
}

func hasPrefixArg(args []arg, prefix string) bool {
	for _, a := range args {
		if t, ok := a.text(); ok && strings.HasPrefix(t, prefix) {
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

func joinSrc(args []arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.src
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

// protectedPath reports whether t names "/", a protected top-level
// directory, the home directory, anything exactly one level below one of
// them, or a path that climbs only upwards from the working directory cwd
// (globs count for every name they may match). It returns the path as
// resolved against cwd, for the refusal to name.
func protectedPath(t, cwd string) (string, bool) {
	if t == "" {
		return "", false
	}
	if cwd == unknownCwd {
		// cd $X may have gone home (X empty): check both.
		if home := joinCwd("~", t); protectedText(home) {
			return home + " (if the cd before it went home)", true
		}
		return t, protectedText(t)
	}
	full := joinCwd(cwd, t)
	return full, protectedText(full)
}

// joinCwd resolves t against the working directory cwd ("" is the
// starting one, which the deny list does not know).
func joinCwd(cwd, t string) string {
	if strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") || cwd == "" || cwd == unknownCwd {
		return t
	}
	return strings.TrimSuffix(cwd, "/") + "/" + t
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
