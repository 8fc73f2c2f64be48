// Package capsules holds the built-in capsules, one library package each
// (router, fs, …) with its embedded Capsule.toml. They are written against
// sdk, ipc and hostapi only (internal/archtest holds this), start no
// goroutines and use no channels or timers (rules_test.go), so each also
// builds to wasm. The exception is a native-only LLM provider (openai),
// which also drives its official SDK over the host's streaming HTTP client
// (internal/archtest: nativeProviders) and so runs natively only. The http
// capsule (fetch_url) also imports golang.org/x/net/html, a pure-Go
// library that builds for wasip1 (internal/archtest: capsuleLibraries).
package capsules
