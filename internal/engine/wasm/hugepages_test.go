package wasm

import (
	"context"
	"runtime"
	"testing"

	"github.com/astrid-go/astrid/internal/hugepages"
)

// TestMachineCodeGetsHugePageAdvice loads a Go capsule from a warm
// compilation cache and checks that wazero mapped its machine code through
// the mmap that internal/hugepages advises: if wazero stops mapping through
// golang.org/x/sys/unix, a cold start silently doubles on a VM.
func TestMachineCodeGetsHugePageAdvice(t *testing.T) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("huge-page advice is Linux on amd64 and arm64 only")
	}
	if !hugepages.KernelSupported() {
		t.Skip("no transparent huge pages in this kernel")
	}
	if !hugepages.Installed() {
		t.Fatal("internal/hugepages is not installed")
	}
	built := guest(t, "testdata/hostile")
	h, _ := newHarness(t, &syncBuffer{})
	if _, err := h.load(t, newRuntime(t, Options{}), withComponent(hostileManifest(t), built), t.TempDir()); err != nil {
		t.Fatal(err) // fills the cache, if it was cold
	}
	before := hugepages.Advised()
	rt := newRuntime(t, Options{})
	m := withComponent(hostileManifest(t), built)
	e := newEngine(rt, m, m.ExecutableComponent(), nil)
	if err := e.load(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer e.Unload(context.Background())
	if hugepages.Advised() == before {
		t.Fatal("loading from the compilation cache mapped no machine code through the advised mmap")
	}
}
