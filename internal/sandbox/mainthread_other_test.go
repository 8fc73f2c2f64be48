//go:build !linux

package sandbox

const mainThreadChild = "ASTRID_SANDBOX_TEST_MAIN_THREAD"

// confineFromTheMainThread has nothing to check where nothing is confined.
func confineFromTheMainThread() int { return 0 }
