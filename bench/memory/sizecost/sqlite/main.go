// Command sqlite is base plus modernc.org/sqlite with an FTS5 table:
// create, insert one note, search.
package main

import (
	"database/sql"
	"fmt"
	"os"

	_ "modernc.org/sqlite" // registered as "sqlite"
)

func main() {
	db, err := sql.Open("sqlite", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer db.Close()
	var n int
	for _, s := range []string{"CREATE VIRTUAL TABLE notes USING fts5(text)", "INSERT INTO notes(text) VALUES ('a note')"} {
		if _, err := db.Exec(s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := db.QueryRow("SELECT count(*) FROM notes WHERE notes MATCH 'note'").Scan(&n); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(n)
}
