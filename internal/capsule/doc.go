// Package capsule owns what a loaded capsule is to the kernel: the Engine
// interface every engine (native, wasm, mcp, static) implements, the
// Composite that runs a capsule's engines as one unit with its lifecycle
// states, and the Registry of loaded capsules.
//
// It does not discover, order or build capsules (internal/runtime does), and
// it makes no security decision: the engines reach the world only through
// internal/host.
package capsule
