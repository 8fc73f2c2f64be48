//go:build unix

package host

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
)

// A FIFO in a granted directory must not hang the handler that reads it: its
// thread may be the one running a whole tool call (dispatch.Runner), and an
// open or a read blocked in the kernel cannot be interrupted.
func TestReadingAFIFODoesNotHang(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	home := filepath.Join(f.homes, "dave")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(home, "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}

	t.Run("no writer reads as empty", func(t *testing.T) {
		call, _ := c.Begin(context.Background(), "dave")
		defer call.End()
		data, err := call.FSRead("home://pipe")
		if err != nil || len(data) != 0 {
			t.Fatalf("FSRead of a FIFO without a writer = %q, %v; want empty at once", data, err)
		}
	})

	t.Run("a waiting read ends with its call", func(t *testing.T) {
		writer, err := os.OpenFile(pipe, os.O_RDWR, 0) // a writer that never writes
		if err != nil {
			t.Fatal(err)
		}
		defer writer.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		call, _ := c.Begin(ctx, "dave")
		defer call.End()
		done := make(chan error, 1)
		go func() {
			_, err := call.FSRead("home://pipe")
			done <- err
		}()
		select {
		case err := <-done:
			if code := hostapi.CodeOf(err); code != hostapi.CodeTimeout {
				t.Fatalf("FSRead past the call's deadline: %v (code %v), want a timeout", err, code)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("FSRead of a silent FIFO outlived its call's deadline")
		}
	})
}
