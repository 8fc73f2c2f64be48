package shell

import (
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file resolves the words of a command line parsed by
// mvdan.cc/sh/v3/syntax into the values they may take when bash runs it,
// far enough for the deny list (deny.go): quotes and escapes removed,
// $'..' decoded, braces expanded, $HOME written as "~", variables set
// earlier in the same command line followed, and parameter expansions
// with modifiers (${x:-/}, ${x:=/}, ${x/#/\/}, ${x%/*} ...) taken as each
// value they may give. What cannot be known before the command runs (a
// variable from the environment, most command substitutions) stays in the
// value as the unknown mark; deny.go decides conservatively on it.

// unknown stands, inside a resolved value, for an expansion whose value
// is not known before the command runs. Bash arguments never hold a NUL
// byte, so the mark cannot be confused with text.
const unknown = "\x00"

// maxAlternatives bounds the values one word (or one variable) may be
// taken to have; past it the word is taken as unknown, which is decided
// conservatively where it matters.
const maxAlternatives = 64

// maxPatternText bounds the text a ${x#pattern} or ${x/pattern/y} is
// computed on, and the pattern; longer ones are taken as unknown.
const maxPatternText = 128

// unresolvedName is the variable an unknown part is written back as when a
// resolved text is parsed again as a command line (sh -c, eval, a script
// piped into bash): the nested check sees an expansion it cannot resolve.
const unresolvedName = "UNRESOLVED_EXPANSION"

// quoting is the context a word part is read in.
type quoting int

const (
	unquoted     quoting = iota
	doubleQuoted         // inside "..." or an unquoted here-doc
)

// resolve returns the values w may take. With split, an unquoted
// expansion's value is split into fields, each of them one of the values.
func (c *checker) resolve(w *syntax.Word, split bool) []string {
	if w == nil {
		return []string{""}
	}
	braced := *w // SplitBraces rewrites the word; the walk must not see it
	syntax.SplitBraces(&braced)
	return c.resolveParts(braced.Parts, unquoted, split)
}

func (c *checker) resolveParts(parts []syntax.WordPart, q quoting, split bool) []string {
	out := []string{""}
	for _, p := range parts {
		out = product(out, c.resolvePart(p, q, split))
	}
	return out
}

func (c *checker) resolvePart(p syntax.WordPart, q quoting, split bool) []string {
	switch x := p.(type) {
	case *syntax.Lit:
		return []string{unescape(x.Value, q)}
	case *syntax.SglQuoted:
		if x.Dollar {
			return []string{ansiC(x.Value)}
		}
		return []string{noNUL(x.Value)}
	case *syntax.DblQuoted:
		return c.resolveParts(x.Parts, doubleQuoted, false)
	case *syntax.ParamExp:
		return fields(c.param(x), q == unquoted && split)
	case *syntax.CmdSubst:
		return fields(c.substitution(x), q == unquoted && split)
	case *syntax.ArithmExp:
		return []string{"0"} // a number: never a program or a protected path
	case *syntax.ProcSubst:
		return []string{"/dev/fd/63"}
	case *syntax.ExtGlob:
		return []string{"*"} // @(etc|usr) may match any name
	case *syntax.BraceExp:
		if x.Sequence {
			return c.sequence(x)
		}
		var out []string
		for _, e := range x.Elems {
			out = union(out, c.resolveParts(e.Parts, q, split))
		}
		return out
	}
	return []string{unknown}
}

// product is every value of a followed by every value of b.
func product(a, b []string) []string {
	if len(a)*len(b) > maxAlternatives {
		return []string{unknown}
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return dedupe(out)
}

// union is the values of a and of b.
func union(a, b []string) []string {
	out := dedupe(append(append([]string(nil), a...), b...))
	if len(out) > maxAlternatives {
		return []string{unknown}
	}
	return out
}

func dedupe(vs []string) []string {
	out := vs[:0]
	seen := make(map[string]bool, len(vs))
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// fields splits each value at blanks, as bash splits an unquoted
// expansion: each field is one of the values the word may take.
func fields(vs []string, split bool) []string {
	if !split {
		return vs
	}
	var out []string
	for _, v := range vs {
		f := strings.Fields(v)
		if len(f) == 0 {
			f = []string{""}
		}
		out = append(out, f...)
	}
	out = dedupe(out)
	if len(out) > maxAlternatives {
		return []string{unknown}
	}
	return out
}

// unescape removes the backslashes bash removes from a literal.
func unescape(s string, q quoting) string {
	if strings.IndexByte(s, '\\') < 0 {
		return noNUL(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		n := s[i+1]
		switch {
		case n == '\n':
			i++ // a line continuation
		case q == unquoted || strings.IndexByte("$`\"\\", n) >= 0:
			b.WriteByte(n)
			i++
		default:
			b.WriteByte('\\')
		}
	}
	return noNUL(b.String())
}

func noNUL(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "")
}

// ansiC decodes the body of $'...' with bash's backslash escapes, so
// $'\x2f' is "/" and $'\x72m' is "rm". A NUL ends nothing here: it is
// dropped, as no argument can hold one.
func ansiC(s string) string {
	var b strings.Builder
	i := 0
	number := func(base, width, bits int) {
		digits := "01234567"
		if base == 16 {
			digits = "0123456789abcdefABCDEF"
		}
		start := i
		for i < len(s) && i-start < width && strings.IndexByte(digits, s[i]) >= 0 {
			i++
		}
		n, err := strconv.ParseUint(s[start:i], base, 32)
		switch {
		case err != nil:
		case bits == 8:
			b.WriteByte(byte(n))
		default:
			b.WriteRune(rune(n))
		}
	}
	for i < len(s) {
		ch := s[i]
		i++
		if ch != '\\' || i >= len(s) {
			b.WriteByte(ch)
			continue
		}
		e := s[i]
		i++
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case 'c':
			if i < len(s) {
				b.WriteByte(s[i] & 0x1f)
				i++
			}
		case 'x':
			number(16, 2, 8)
		case 'u':
			number(16, 4, 32)
		case 'U':
			number(16, 8, 32)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			i--
			number(8, 3, 8)
		default:
			b.WriteByte(e)
		}
	}
	return noNUL(b.String())
}

// sequence expands {a..z} and {1..10}, when short; longer ones are
// unknown.
func (c *checker) sequence(x *syntax.BraceExp) []string {
	if len(x.Elems) < 2 {
		return []string{unknown}
	}
	from, ok1 := single(c.resolveParts(x.Elems[0].Parts, unquoted, false))
	to, ok2 := single(c.resolveParts(x.Elems[1].Parts, unquoted, false))
	if !ok1 || !ok2 {
		return []string{unknown}
	}
	var out []string
	if a, err := strconv.Atoi(from); err == nil {
		b, err := strconv.Atoi(to)
		if err != nil || a-b > maxAlternatives || b-a > maxAlternatives {
			return []string{unknown}
		}
		step := 1
		if b < a {
			step = -1
		}
		for n := a; ; n += step {
			out = append(out, strconv.Itoa(n))
			if n == b {
				break
			}
		}
		return out
	}
	if len(from) == 1 && len(to) == 1 {
		a, b := from[0], to[0]
		if a > b {
			a, b = b, a
		}
		for ch := int(a); ch <= int(b); ch++ {
			out = append(out, string(rune(ch)))
		}
		if len(out) > maxAlternatives {
			return []string{unknown}
		}
		return out
	}
	return []string{unknown}
}

// single reports the one value of vs, when it has exactly one and it is
// known.
func single(vs []string) (string, bool) {
	if len(vs) != 1 || strings.Contains(vs[0], unknown) {
		return "", false
	}
	return vs[0], true
}

// lookup is the values of the variable name.
func (c *checker) lookup(name string) []string {
	if v, ok := c.vars[name]; ok {
		return v
	}
	if name == "HOME" {
		return []string{"~"}
	}
	return []string{unknown}
}

// param resolves a parameter expansion: $x, ${x}, and the forms with
// modifiers, each taken as every value it may give.
func (c *checker) param(x *syntax.ParamExp) []string {
	if x.Length {
		return []string{"0"}
	}
	if x.Param == nil || x.Excl || x.Width || x.IsSet || x.Flags != nil || x.NestedParam != nil ||
		x.Names != 0 || len(x.Modifiers) > 0 || x.Index != nil {
		return []string{unknown} // ${!x}, ${a[i]}, ${!prefix*}: not followed
	}
	name := x.Param.Value
	base := c.lookup(name)
	switch {
	case x.Slice != nil:
		return c.slice(base, x.Slice)
	case x.Repl != nil:
		return c.replace(base, x.Repl)
	case x.Exp != nil:
		return c.expansion(name, base, x.Exp)
	}
	return base
}

// slice computes ${x:offset:length} of known values with literal numbers.
func (c *checker) slice(base []string, s *syntax.Slice) []string {
	num := func(e syntax.ArithmExpr) (int, bool) {
		w, ok := e.(*syntax.Word)
		if !ok {
			return 0, false
		}
		v, ok := single(c.resolve(w, false))
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		return n, err == nil
	}
	off, ok := num(s.Offset)
	if !ok {
		return []string{unknown}
	}
	var out []string
	for _, b := range base {
		if strings.Contains(b, unknown) {
			return []string{unknown}
		}
		o := off
		if o < 0 {
			o += len(b)
		}
		if o < 0 || o > len(b) {
			out = append(out, "")
			continue
		}
		v := b[o:]
		if s.Length != nil {
			n, ok := num(s.Length)
			if !ok {
				return []string{unknown}
			}
			if n < 0 {
				n += len(v)
			}
			if n < 0 {
				n = 0
			}
			v = v[:min(n, len(v))]
		}
		out = append(out, v)
	}
	return dedupe(out)
}

// replace computes ${x/pattern/with} (and //, /#, /%).
func (c *checker) replace(base []string, r *syntax.Replace) []string {
	pat, ok := single(c.resolve(r.Orig, false))
	if !ok {
		return union(base, []string{unknown})
	}
	var anchor byte
	if pat != "" && (pat[0] == '#' || pat[0] == '%') {
		anchor, pat = pat[0], pat[1:]
	}
	var out []string
	for _, b := range base {
		for _, with := range c.resolve(r.With, false) {
			v, ok := replaceGlob(b, pat, with, r.All, anchor)
			if !ok {
				// Not computed: the value may be left as it is, get
				// the replacement at either end, or be replaced whole.
				out = union(out, []string{b, with + b, b + with, with, unknown})
				continue
			}
			out = union(out, []string{v})
		}
	}
	return out
}

// expansion computes ${x:-w}, ${x:=w}, ${x:+w}, ${x#p}, ${x%p}, ${x^^}
// and their kin.
func (c *checker) expansion(name string, base []string, e *syntax.Expansion) []string {
	word := func() []string { return c.resolve(e.Word, false) }
	switch e.Op {
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		return union([]string{""}, word())
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull:
		return union(base, word())
	case syntax.AssignUnset, syntax.AssignUnsetOrNull:
		v := union(base, word())
		c.setVar(name, v, false)
		return v
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return base
	case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
		pat, ok := single(word())
		var out []string
		for _, b := range base {
			v, done := trimGlob(b, pat, e.Op)
			if !ok || !done {
				out = union(out, []string{b, unknown})
				continue
			}
			out = union(out, []string{v})
		}
		return out
	case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
		var out []string
		for _, b := range base {
			switch e.Op {
			case syntax.UpperAll:
				b = strings.ToUpper(b)
			case syntax.LowerAll:
				b = strings.ToLower(b)
			case syntax.UpperFirst:
				if b != "" {
					b = strings.ToUpper(b[:1]) + b[1:]
				}
			case syntax.LowerFirst:
				if b != "" {
					b = strings.ToLower(b[:1]) + b[1:]
				}
			}
			out = append(out, b)
		}
		return dedupe(out)
	}
	return []string{unknown} // ${x@Q} and the like
}

// substitution is the values $( ) may give, for the few commands whose
// output the text tells: find prints paths under its starting points,
// mktemp a new path, echo its arguments, pwd the working directory.
// Anything else is unknown.
func (c *checker) substitution(cs *syntax.CmdSubst) []string {
	if len(cs.Stmts) != 1 {
		return []string{unknown}
	}
	call, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(cs.Stmts[0].Redirs) > 0 {
		return []string{unknown}
	}
	prog, ok := single(c.resolve(call.Args[0], true))
	if !ok {
		return []string{unknown}
	}
	args := c.args(call.Args[1:])
	switch path.Base(prog) {
	case "find":
		return findOutput(args)
	case "mktemp":
		return []string{"/tmp/tmp.mktemp"}
	case "echo":
		return echoOutput(args)
	case "pwd":
		var out []string
		for _, d := range c.cwds {
			if d == "" || d == unknownCwd {
				d = unknown
			}
			out = append(out, d)
		}
		return dedupe(out)
	}
	return []string{unknown}
}

// findOutput is what find prints: its starting points and paths below
// them (a name standing for any of those).
func findOutput(args []arg) []string {
	var out []string
	i := 0
	for i < len(args) && (args[i].is("-H") || args[i].is("-L") || args[i].is("-P")) {
		i++
	}
	for ; i < len(args); i++ {
		if t, ok := args[i].text(); ok && (strings.HasPrefix(t, "-") || t == "(" || t == "!") {
			break
		}
		for _, r := range args[i].alts {
			if strings.Contains(r, unknown) {
				out = union(out, []string{r})
				continue
			}
			out = union(out, []string{r, strings.TrimSuffix(r, "/") + "/found"})
		}
	}
	if out == nil {
		out = []string{".", "./found"}
	}
	return out
}

// echoOutput is what echo prints (its options skipped; with -e, escapes
// decoded).
func echoOutput(args []arg) []string {
	escapes := false
	for len(args) > 0 {
		t, ok := args[0].text()
		if !ok || len(t) < 2 || t[0] != '-' || strings.Trim(t[1:], "neE") != "" {
			break
		}
		escapes = escapes || strings.Contains(t, "e")
		args = args[1:]
	}
	out := joinArgs(args)
	if escapes {
		for i, v := range out {
			out[i] = ansiC(v)
		}
	}
	return out
}

// joinArgs is every text the arguments make joined by spaces.
func joinArgs(args []arg) []string {
	out := []string{""}
	for i, a := range args {
		if i > 0 {
			out = product(out, []string{" "})
		}
		out = product(out, a.alts)
	}
	return out
}

// simpleGlob reports a pattern this file can match itself: *, ? and
// literal text (a bracket class or an extended glob is not followed).
func simpleGlob(p string) bool {
	return !strings.ContainsAny(p, "[]") && !strings.Contains(p, "(")
}

// globMatch reports whether s matches the pattern p, where * matches any
// text (slashes too, as in a parameter expansion) and ? any one byte.
func globMatch(p, s string) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]) && p[pi] != '*':
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// trimGlob computes ${b#p}, ${b##p}, ${b%p} and ${b%%p}; done is false
// when b or p is beyond what is computed here.
func trimGlob(b, p string, op syntax.ParExpOperator) (string, bool) {
	if strings.Contains(b, unknown) || !simpleGlob(p) || len(b) > maxPatternText || len(p) > maxPatternText/2 {
		return "", false
	}
	n := len(b)
	switch op {
	case syntax.RemSmallPrefix:
		for i := 0; i <= n; i++ {
			if globMatch(p, b[:i]) {
				return b[i:], true
			}
		}
	case syntax.RemLargePrefix:
		for i := n; i >= 0; i-- {
			if globMatch(p, b[:i]) {
				return b[i:], true
			}
		}
	case syntax.RemSmallSuffix:
		for i := n; i >= 0; i-- {
			if globMatch(p, b[i:]) {
				return b[:i], true
			}
		}
	case syntax.RemLargeSuffix:
		for i := 0; i <= n; i++ {
			if globMatch(p, b[i:]) {
				return b[:i], true
			}
		}
	}
	return b, true
}

// replaceGlob computes ${b/p/with} (all: //; anchor '#' or '%': /# /%);
// done is false when b or p is beyond what is computed here.
func replaceGlob(b, p, with string, all bool, anchor byte) (string, bool) {
	if strings.Contains(b, unknown) || !simpleGlob(p) || len(b) > maxPatternText/2 || len(p) > maxPatternText/2 {
		return "", false
	}
	n := len(b)
	switch anchor {
	case '#':
		for i := n; i >= 0; i-- {
			if globMatch(p, b[:i]) {
				return with + b[i:], true
			}
		}
		return b, true
	case '%':
		for i := 0; i <= n; i++ {
			if globMatch(p, b[i:]) {
				return b[:i] + with, true
			}
		}
		return b, true
	}
	if p == "" {
		return b, true
	}
	var out strings.Builder
	for i := 0; i < n; {
		j := n
		for ; j > i; j-- {
			if globMatch(p, b[i:j]) {
				break
			}
		}
		if j == i {
			out.WriteByte(b[i])
			i++
			continue
		}
		out.WriteString(with)
		i = j
		if !all {
			out.WriteString(b[i:])
			return out.String(), true
		}
	}
	return out.String(), true
}
