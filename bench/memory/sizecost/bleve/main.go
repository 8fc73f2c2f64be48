// Command bleve is base plus a bleve index: create, index one note, search.
package main

import (
	"fmt"
	"os"

	"github.com/blevesearch/bleve/v2"
)

func main() {
	idx, err := bleve.New(os.Args[1], bleve.NewIndexMapping())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer idx.Close()
	if err := idx.Index("1", map[string]string{"text": "a note"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	res, err := idx.Search(bleve.NewSearchRequest(bleve.NewMatchQuery("note")))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(res.Total)
}
