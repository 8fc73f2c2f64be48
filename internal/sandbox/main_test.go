package sandbox

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Every confining goroutine ends once its child is released: none may be
// left parked (each holds an OS thread).
func TestMain(m *testing.M) {
	if os.Getenv(mainThreadChild) == "1" {
		os.Exit(confineFromTheMainThread())
	}
	goleak.VerifyTestMain(m)
}
