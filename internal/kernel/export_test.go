package kernel

import "testing"

// What the external test package (kernel_test: the benchmarks that import
// internal/metrics, which imports this package) needs of the internal
// tests' helpers.

// BootAgentForTest is bootAgent.
func BootAgentForTest(tb testing.TB, script string, edit ...func(*Options)) *Kernel {
	return bootAgent(tb, script, edit...)
}

// FiveReadsScript is fiveReadsScript.
func FiveReadsScript() string { return fiveReadsScript() }
