package sandbox

// ABI is the running kernel's Landlock ABI version, 0 when it has none (or
// on an OS without Landlock). Need(ABI()) says whether Start can confine
// here; tests and `astrid sandbox check` use it to decide up front.
func ABI() int { return landlockABI() }
