package shell

import (
	"strconv"
	"strings"
)

// This file reads a command line the way bash splits it, far enough for
// the deny list (deny.go) to see every simple command that would run: the
// words after quote removal, the redirection targets, and the commands
// inside $( ), backticks, <( ), >( ), here-strings and unquoted here-docs.
// It is not a shell: what it cannot know (a variable's value, a command
// substitution's output) it marks, and deny.go assumes the worst of it.

// word is one word of a simple command after quote removal.
type word struct {
	// text is the word with quotes removed, $HOME / ${HOME} written as
	// "~", and every other expansion (a variable, a command
	// substitution) left out, as if it expanded to nothing.
	text string
	// expanded: the word holds an expansion whose value is not known.
	expanded bool
	// onlyExpansion: the word is nothing but such expansions.
	onlyExpansion bool
	// substituted: the word holds a command or process substitution.
	substituted bool
	// quoted: some of the word was quoted (an assignment's name never is).
	quotedAt int // index in text of the first quoted byte, -1 if none
}

// segment is one simple command.
type segment struct {
	words []word
	// redirects are the targets of >, >>, &>, <> ... (not of < or here-docs).
	redirects []word
	// feeds are texts the command reads as its standard input that the
	// deny list can see: here-strings and here-doc bodies.
	feeds []string
	// pipedFrom is the command whose output this one reads (a | b).
	pipedFrom *segment
	// cwd is the working directory at this command, as far as the cd
	// commands before it in the same list tell: "" is the starting one.
	cwd string
}

// heredoc is a here-doc whose body has not been read yet.
type heredoc struct {
	delim  string
	quoted bool // the delimiter was quoted: the body is not expanded
	strip  bool // <<-: leading tabs are stripped
	seg    *segment
}

// parser splits src into segments; nested command texts (backticks, -c
// strings) get their own parser.
type parser struct {
	src     string
	i       int
	segs    []*segment
	pending []heredoc
	nested  []string // command texts found inside backticks
	tooDeep bool
	depth   int
}

// maxNesting bounds $( ) inside $( ): deeper is refused, not guessed.
const maxNesting = 32

// parse splits command into its simple commands. nested holds the texts of
// backtick substitutions, to be parsed like a command line of their own.
func parse(command string) (segs []*segment, nested []string, tooDeep bool) {
	p := &parser{src: command}
	p.list(0, "")
	return p.segs, p.nested, p.tooDeep
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// isMeta reports the bytes that end an unquoted word.
func isMeta(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

// reserved are bash's reserved words that may stand before a command.
var reserved = map[string]bool{
	"{": true, "}": true, "!": true, "if": true, "then": true, "else": true, "elif": true, "fi": true,
	"do": true, "done": true, "while": true, "until": true, "time": true, "function": true, "[[": true, "coproc": true,
}

// list reads commands until end or closer (')' of a $( ) or <( )). cwd is
// the working directory the list starts in.
func (p *parser) list(closer byte, cwd string) {
	cur := &segment{cwd: cwd}
	var prev *segment
	pipe := false
	end := func() {
		if len(cur.words) > 0 || len(cur.redirects) > 0 || len(cur.feeds) > 0 {
			if pipe {
				cur.pipedFrom = prev
			}
			p.segs = append(p.segs, cur)
			prev = cur
			cwd = nextCwd(cur, cwd)
		}
		pipe = false
		cur = &segment{cwd: cwd}
	}
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case isBlank(c):
			p.i++
		case c == '\\' && p.i+1 < len(p.src) && p.src[p.i+1] == '\n':
			p.i += 2
		case c == '\n':
			end()
			p.i++
			p.readHeredocs()
		case c == '#':
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		case c == '|':
			end()
			p.i++
			if p.i < len(p.src) && p.src[p.i] == '|' {
				p.i++
			} else {
				pipe = true
				if p.i < len(p.src) && p.src[p.i] == '&' {
					p.i++
				}
			}
		case c == '&' && p.i+1 < len(p.src) && p.src[p.i+1] == '>':
			p.i++
			p.redirect(cur)
		case c == ';' || c == '&' || c == '(':
			end()
			p.i++
		case c == ')':
			end()
			p.i++
			if closer == ')' {
				return
			}
		case c == '<' || c == '>':
			if p.i+1 < len(p.src) && p.src[p.i+1] == '(' {
				// Process substitution: a command of its own, and a
				// word (a /dev/fd path) here.
				p.i += 2
				p.sub(cwd)
				cur.words = append(cur.words, word{expanded: true, onlyExpansion: true, substituted: true, quotedAt: -1})
				continue
			}
			p.redirect(cur)
		default:
			w, fd := p.word(cwd)
			if fd {
				p.redirect(cur)
				continue
			}
			if len(cur.words) == 0 && w.quotedAt < 0 && !w.expanded && reserved[w.text] {
				continue
			}
			cur.words = append(cur.words, w)
		}
	}
	end()
	p.readHeredocs()
}

// sub reads a nested list up to its ')' (after "$(" or "<(").
func (p *parser) sub(cwd string) {
	p.depth++
	if p.depth > maxNesting {
		p.tooDeep = true
		p.i = len(p.src)
		return
	}
	p.list(')', cwd)
	p.depth--
}

// redirect reads a redirection operator at p.i and its target.
func (p *parser) redirect(cur *segment) {
	start := p.i
	for p.i < len(p.src) && strings.IndexByte("<>&|-", p.src[p.i]) >= 0 && p.i-start < 3 {
		p.i++
	}
	op := p.src[start:p.i]
	for p.i < len(p.src) && isBlank(p.src[p.i]) {
		p.i++
	}
	if p.i >= len(p.src) || isMeta(p.src[p.i]) {
		return
	}
	rawStart := p.i
	target, _ := p.word("")
	raw := p.src[rawStart:p.i]
	switch {
	case strings.HasPrefix(op, "<<<"):
		cur.feeds = append(cur.feeds, target.text)
	case strings.HasPrefix(op, "<<"):
		p.pending = append(p.pending, heredoc{delim: target.text, quoted: strings.ContainsAny(raw, `'"\`), strip: strings.HasSuffix(op, "-"), seg: cur})
	case op == "<" || op == "<&":
	default:
		cur.redirects = append(cur.redirects, target)
	}
}

// readHeredocs reads the bodies of the here-docs opened on the line just
// ended: each is its command's input; an unquoted one is expanded, so the
// command substitutions in it run.
func (p *parser) readHeredocs() {
	docs := p.pending
	p.pending = nil
	for _, d := range docs {
		var body strings.Builder
		for p.i < len(p.src) {
			eol := strings.IndexByte(p.src[p.i:], '\n')
			line := p.src[p.i:]
			if eol >= 0 {
				line = p.src[p.i : p.i+eol]
				p.i += eol + 1
			} else {
				p.i = len(p.src)
			}
			if d.strip {
				line = strings.TrimLeft(line, "\t")
			}
			if line == d.delim {
				break
			}
			body.WriteString(line + "\n")
		}
		text := body.String()
		if !d.quoted {
			// Expanded as inside double quotes: $( ) and backticks run.
			q := &parser{src: text, depth: p.depth}
			expanded := q.doubleQuoted(&strings.Builder{}, &word{quotedAt: -1}, d.seg.cwd, false)
			p.segs = append(p.segs, q.segs...)
			p.nested = append(p.nested, q.nested...)
			p.tooDeep = p.tooDeep || q.tooDeep
			text = expanded
		}
		d.seg.feeds = append(d.seg.feeds, text)
	}
}

// word reads one word at p.i. fd is true when the word was a file
// descriptor number directly before a redirection (2>file).
func (p *parser) word(cwd string) (w word, fd bool) {
	var b strings.Builder
	w.quotedAt = -1
	literal := false
	start := p.i
	for p.i < len(p.src) {
		c := p.src[p.i]
		if isMeta(c) {
			if (c == '<' || c == '>') && p.i > start && allDigits(p.src[start:p.i]) {
				return w, true
			}
			break
		}
		switch c {
		case '\\':
			p.i++
			if p.i < len(p.src) {
				if p.src[p.i] != '\n' {
					b.WriteByte(p.src[p.i])
					literal = true
				}
				p.i++
			}
		case '\'':
			p.markQuoted(&w, &b)
			end := strings.IndexByte(p.src[p.i+1:], '\'')
			if end < 0 {
				end = len(p.src) - p.i - 1
			}
			b.WriteString(p.src[p.i+1 : p.i+1+end])
			literal = true
			p.i += end + 2
			p.clamp()
		case '"':
			p.markQuoted(&w, &b)
			p.i++
			if p.doubleQuoted(&b, &w, cwd, true) != "" {
				literal = true
			}
		case '$':
			if p.dollar(&b, &w, cwd) {
				literal = true
			}
		case '`':
			p.backtick(&w)
		default:
			b.WriteByte(c)
			literal = true
			p.i++
		}
	}
	p.clamp()
	w.text = b.String()
	w.onlyExpansion = w.expanded && !literal
	return w, false
}

// clamp brings p.i back to the end after an unterminated quote,
// substitution or ${ (bash would refuse such a line; the deny list still
// checks what it read).
func (p *parser) clamp() {
	if p.i > len(p.src) {
		p.i = len(p.src)
	}
}

func (p *parser) markQuoted(w *word, b *strings.Builder) {
	if w.quotedAt < 0 {
		w.quotedAt = b.Len()
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// doubleQuoted reads up to the closing '"' (or, with closing false, to the
// end: a here-doc body) and returns what it added to b.
func (p *parser) doubleQuoted(b *strings.Builder, w *word, cwd string, closing bool) string {
	from := b.Len()
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '"' && closing:
			p.i++
			return b.String()[from:]
		case c == '\\' && p.i+1 < len(p.src) && strings.IndexByte("$`\"\\\n", p.src[p.i+1]) >= 0:
			if p.src[p.i+1] != '\n' {
				b.WriteByte(p.src[p.i+1])
			}
			p.i += 2
		case c == '$':
			p.dollar(b, w, cwd)
		case c == '`':
			p.backtick(w)
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return b.String()[from:]
}

// dollar reads an expansion at p.i ('$'); it reports whether it added
// literal text.
func (p *parser) dollar(b *strings.Builder, w *word, cwd string) bool {
	p.i++
	if p.i >= len(p.src) {
		b.WriteByte('$')
		return true
	}
	switch c := p.src[p.i]; {
	case c == '(':
		p.i++
		p.sub(cwd)
		w.expanded, w.substituted = true, true
		return false
	case c == '\'':
		p.markQuoted(w, b)
		b.WriteString(p.ansiC())
		return true
	case c == '"':
		p.markQuoted(w, b)
		p.i++
		return p.doubleQuoted(b, w, cwd, true) != ""
	case c == '{':
		end := strings.IndexByte(p.src[p.i:], '}')
		if end < 0 {
			end = len(p.src) - p.i
		}
		name := p.src[min(p.i+1, p.i+end) : p.i+end]
		p.i += end + 1
		p.clamp()
		return p.variable(b, w, name)
	case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		start := p.i
		for p.i < len(p.src) && (p.src[p.i] == '_' || p.src[p.i] >= 'A' && p.src[p.i] <= 'Z' || p.src[p.i] >= 'a' && p.src[p.i] <= 'z' || p.src[p.i] >= '0' && p.src[p.i] <= '9') {
			p.i++
		}
		return p.variable(b, w, p.src[start:p.i])
	case strings.IndexByte("0123456789@*#?$!-", c) >= 0:
		p.i++
		w.expanded = true
		return false
	}
	b.WriteByte('$')
	return true
}

// variable writes the expansion of $name: ~ for HOME, nothing (and marked
// unknown) for the rest.
func (p *parser) variable(b *strings.Builder, w *word, name string) bool {
	if name == "HOME" {
		b.WriteByte('~')
		return true
	}
	w.expanded = true
	return false
}

// backtick reads `...` at p.i; its text is parsed as a command line of its
// own (its \` \\ \$ escapes removed).
func (p *parser) backtick(w *word) {
	p.i++
	var inner strings.Builder
	for p.i < len(p.src) && p.src[p.i] != '`' {
		if p.src[p.i] == '\\' && p.i+1 < len(p.src) && strings.IndexByte("`\\$", p.src[p.i+1]) >= 0 {
			p.i++
		}
		inner.WriteByte(p.src[p.i])
		p.i++
	}
	p.i++
	p.clamp()
	p.nested = append(p.nested, inner.String())
	w.expanded, w.substituted = true, true
}

// ansiC reads $'...' at p.i (on the quote) and returns its value, with
// bash's backslash escapes decoded, so $'\x2f' is "/".
func (p *parser) ansiC() string {
	p.i++
	var b strings.Builder
	for p.i < len(p.src) && p.src[p.i] != '\'' {
		c := p.src[p.i]
		p.i++
		if c != '\\' || p.i >= len(p.src) {
			b.WriteByte(c)
			continue
		}
		e := p.src[p.i]
		p.i++
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
		case 'x':
			b.WriteString(p.number(16, 2, 8))
		case 'u':
			b.WriteString(p.number(16, 4, 32))
		case 'U':
			b.WriteString(p.number(16, 8, 32))
		case '0', '1', '2', '3', '4', '5', '6', '7':
			p.i--
			b.WriteString(p.number(8, 3, 8))
		default:
			b.WriteByte(e)
		}
	}
	p.i++
	p.clamp()
	return b.String()
}

// number reads up to width digits in base and returns the byte (bits 8)
// or rune it names.
func (p *parser) number(base, width, bits int) string {
	digits := "01234567"
	if base == 16 {
		digits = "0123456789abcdefABCDEF"
	}
	start := p.i
	for p.i < len(p.src) && p.i-start < width && strings.IndexByte(digits, p.src[p.i]) >= 0 {
		p.i++
	}
	n, err := strconv.ParseUint(p.src[start:p.i], base, 32)
	if err != nil {
		return ""
	}
	if bits == 8 {
		return string([]byte{byte(n)})
	}
	return string(rune(n))
}

// nextCwd is the working directory after seg: a cd changes it (to the
// home for a bare cd), anything else leaves it.
func nextCwd(seg *segment, cwd string) string {
	if len(seg.words) == 0 {
		return cwd
	}
	switch seg.words[0].text {
	case "cd", "pushd":
	default:
		return cwd
	}
	var target *word
	for i := 1; i < len(seg.words); i++ {
		if t := seg.words[i].text; t == "--" || strings.HasPrefix(t, "-") && t != "-" {
			continue
		}
		target = &seg.words[i]
		break
	}
	switch {
	case target == nil:
		return "~"
	case target.onlyExpansion || target.text == "-":
		return unknownCwd
	}
	return joinCwd(cwd, target.text)
}

// unknownCwd is a working directory the deny list cannot know (cd "$X").
const unknownCwd = "\x00unknown"
