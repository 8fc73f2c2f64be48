//go:build !unix

package wasm

import "os"

func checkOwner(string, os.FileInfo) error { return nil }
