// Command base is the baseline: open a file and print its size.
package main

import (
	"fmt"
	"os"
)

func main() {
	info, err := os.Stat(os.Args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(info.Size())
}
