package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// mainThreadChild makes the test binary a child that confines a command
// from its main thread (TestMain).
const mainThreadChild = "ASTRID_SANDBOX_TEST_MAIN_THREAD"

// confineFromTheMainThread runs onSpareThread from the process's main
// thread, as a Start whose goroutine was scheduled there would, and then
// a confined `kill -0` of this process: 0 when the confinement ran on
// another thread and the signal was refused.
func confineFromTheMainThread() int {
	runtime.LockOSThread() // the main goroutine: on the main thread unless moved
	if unix.Gettid() != unix.Getpid() {
		fmt.Println("skip: the main goroutine is not on the main thread")
		return 0
	}
	tid := make(chan int, 1)
	onSpareThread(func() { tid <- unix.Gettid() })
	if got := <-tid; got == unix.Getpid() {
		fmt.Printf("confined on the main thread (tid %d)\n", got)
		return 1
	}
	cmd := exec.Command("/bin/sh", "-c", fmt.Sprintf("kill -0 %d", os.Getpid()))
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	release, err := Start(cmd, Policy{Read: DefaultSystemRead, Devices: DefaultDevices})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	err = cmd.Wait()
	release()
	if err == nil {
		fmt.Println("a confined child signalled the process that confined it")
		return 1
	}
	fmt.Println("refused:", strings.TrimSpace(out.String()))
	return 0
}

// TestConfinementNeverTakesTheMainThread: confinement asked for from the
// main thread happens on another one, so the process (whose main thread
// kill(2) checks) stays outside the child's Landlock domain and the child
// cannot signal it.
func TestConfinementNeverTakesTheMainThread(t *testing.T) {
	if err := Need(ABI()); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainThreadChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	if strings.HasPrefix(string(out), "skip:") {
		t.Skip(string(out))
	}
	if !strings.HasPrefix(string(out), "refused:") {
		t.Fatalf("child: %s", out)
	}
}
