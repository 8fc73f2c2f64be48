// Package capsules holds the built-in capsules, one library package each
// (router, fs, …) with its embedded Capsule.toml. They are written against
// sdk, ipc and hostapi only, start no goroutines and use no channels or
// timers (rules_test.go enforces this), so each also builds to wasm.
package capsules
