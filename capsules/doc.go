// Package capsules holds the built-in capsules, one library package each
// (router, fs, …) with its embedded Capsule.toml. They are written against
// sdk, ipc and hostapi only (internal/archtest holds this), start no
// goroutines and use no channels or timers (rules_test.go), so each also
// builds to wasm.
package capsules
