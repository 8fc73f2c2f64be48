// Package testutil holds small helpers the kernel's own tests share. It is
// imported only from _test.go files.
package testutil
