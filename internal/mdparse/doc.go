// Package mdparse reads the model's answers: as markdown, goldmark's
// CommonMark parser with GFM tables read by its own paragraph transformer
// into goldmark's table nodes (goldmark's extension package costs every
// astrid command 0.75 ms of package initialisation); and a code block's
// lines as runs of keywords, strings, numbers and comments
// (highlight.go). It is a leaf helper shared by chat's terminal renderer
// and the web view.
//
// It owns reading only: it must not render, style, sanitise or log; what
// is shown, and how safely, is its callers' business.
package mdparse
