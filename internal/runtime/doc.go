// Package runtime owns which capsules run: discovery (the built-ins and
// $ASTRID_HOME/capsules, nowhere else), dependency order (imports and
// exports with version requirements, uplinks first), the loader that builds
// each capsule's Composite of engines (wasm, one mcp per stdio server,
// native for built-ins, static always), and the registry operations — load,
// unload and reload while the kernel runs — with the watcher that reloads a
// changed capsule and astrid.v1.capsules_loaded after every change, and the
// health monitor that restarts a failed capsule with a backoff, up to a cap
// (health.go; the one place restarts of capsules are decided). A boot
// loads capsules concurrently along the dependency order (boot.go), so that
// one slow capsule delays only what imports from it, and lets a command wait
// for just the capsules it needs.
//
// It must not make security decisions of its own: whether an installed
// capsule may load with the grants its manifest asks for is
// internal/grants' decision (Check, made in one place, load, that boot,
// Load and the watcher's reloads all go through), the ACL is enforced by
// internal/dispatch and capabilities by internal/host. It never discovers capsules in a
// workspace an agent was pointed at, and refuses an installed capsule whose
// directory resolves into it.
package runtime
