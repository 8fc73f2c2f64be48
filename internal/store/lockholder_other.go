//go:build !linux

package store

// lockHolderPID is unknowable portably outside Linux; the error still says
// the file is in use.
func lockHolderPID(string) (int, bool) { return 0, false }

func processName(int) string { return "" }
