package mdparse

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/util"
)

// New is a parser of CommonMark and GFM tables. A parser is not safe for
// concurrent use: each caller keeps its own.
func New() parser.Parser {
	p := goldmark.DefaultParser()
	p.AddOptions(parser.WithParagraphTransformers(util.Prioritized(tableTransformer{}, 200)))
	return p
}
