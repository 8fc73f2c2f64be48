package mdparse

import (
	"strings"
)

// Highlighter reads one line of code at a time into runs of a class:
// comments, strings, numbers and the language's keywords. It knows the
// languages answers show most; another language gets strings and numbers
// only. A string or comment spanning lines is marked on its first line
// only.
type Highlighter struct {
	keywords map[string]bool
	// comment starts a comment to the end of the line ("//", "#", "--").
	comment []string
}

// Class is what a run of code is.
type Class int

// The classes of a line's runs.
const (
	Plain Class = iota
	Keyword
	String
	Number
	Comment
)

// Run is a piece of a line and its class.
type Run struct {
	Class Class
	Text  string
}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(s) {
		out[w] = true
	}
	return out
}

var languages = map[string]Highlighter{
	"go":         {words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota"), []string{"//"}},
	"python":     {words("and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield None True False self"), []string{"#"}},
	"javascript": {words("async await break case catch class const continue debugger default delete do else export extends finally for function if import in instanceof let new of return super switch this throw try typeof var void while yield null undefined true false interface type enum implements"), []string{"//"}},
	"rust":       {words("as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while true false Some None Ok Err"), []string{"//"}},
	"shell":      {words("if then else elif fi for while until do done case esac function in return local export echo exit set unset readonly"), []string{"#"}},
	"c":          {words("auto break case char const continue default do double else enum extern float for goto if int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class public private protected new delete this namespace using template bool true false nullptr null final import package extends implements throws"), []string{"//"}},
	"sql":        {words("select from where insert into values update set delete create table drop alter index join left right inner outer on group by order having limit and or not null as distinct union all SELECT FROM WHERE INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE DROP ALTER INDEX JOIN LEFT RIGHT INNER OUTER ON GROUP BY ORDER HAVING LIMIT AND OR NOT NULL AS DISTINCT UNION ALL"), []string{"--"}},
	"toml":       {words("true false"), []string{"#"}},
	"json":       {words("true false null"), nil},
}

var aliases = map[string]string{
	"golang": "go", "py": "python", "python3": "python", "js": "javascript", "jsx": "javascript",
	"ts": "javascript", "tsx": "javascript", "typescript": "javascript", "rs": "rust",
	"sh": "shell", "bash": "shell", "zsh": "shell", "console": "shell", "cpp": "c", "c++": "c",
	"h": "c", "java": "c", "cs": "c", "csharp": "c", "kotlin": "c", "yaml": "toml", "yml": "toml",
	"ini": "toml", "dockerfile": "shell", "makefile": "shell",
}

// For is the highlighter of a code block's info string.
func For(lang string) Highlighter {
	lang = strings.ToLower(strings.TrimSpace(lang))
	if a, ok := aliases[lang]; ok {
		lang = a
	}
	return languages[lang]
}

// Line is one line of code as runs (adjacent plain bytes in one run;
// every run's text is a piece of s).
func (h Highlighter) Line(s string) []Run {
	out := make([]Run, 0, 8)
	plain := 0 // where the plain bytes not yet in a run start
	add := func(c Class, from, to int) {
		if plain < from {
			out = append(out, Run{Plain, s[plain:from]})
		}
		out = append(out, Run{c, s[from:to]})
		plain = to
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case h.commentAt(s[i:]):
			add(Comment, i, len(s))
			return out
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
			add(String, i, j)
			i = j
		case c >= '0' && c <= '9' && (i == 0 || !identByte(s[i-1])):
			j := i
			for j < len(s) && (identByte(s[j]) || s[j] == '.') {
				j++
			}
			add(Number, i, j)
			i = j
		case identByte(c):
			j := i
			for j < len(s) && identByte(s[j]) {
				j++
			}
			if h.keywords[s[i:j]] {
				add(Keyword, i, j)
			}
			i = j
		default:
			i++
		}
	}
	if plain < len(s) {
		out = append(out, Run{Plain, s[plain:]})
	}
	return out
}

func (h Highlighter) commentAt(s string) bool {
	for _, c := range h.comment {
		if strings.HasPrefix(s, c) {
			return true
		}
	}
	return false
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
