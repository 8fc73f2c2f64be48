//go:build linux && (amd64 || arm64)

package hugepages

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMirrorMatchesXSys reads the mmapper of the x/sys this module builds
// with and checks it is the one xsysMapper mirrors, field for field, and
// that its version is listed as checked.
func TestMirrorMatchesXSys(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", "golang.org/x/sys").Output()
	if err != nil {
		t.Fatalf("go list golang.org/x/sys: %v", err)
	}
	version, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !knownXSys[version] {
		t.Fatalf("golang.org/x/sys %s is not in knownXSys: compare its unix/syscall_unix.go mmapper with xsysMapper, then list it", version)
	}
	src, err := os.ReadFile(filepath.Join(dir, "unix", "syscall_unix.go"))
	if err != nil {
		t.Fatal(err)
	}
	def := regexp.MustCompile(`(?s)type mmapper struct \{(.*?)\n\}`).FindSubmatch(src)
	if def == nil {
		t.Fatal("x/sys unix/syscall_unix.go has no mmapper struct")
	}
	got := strings.Join(strings.Fields(regexp.MustCompile(`//[^\n]*`).ReplaceAllString(string(def[1]), "")), " ")
	want := "sync.Mutex active map[*byte][]byte mmap func(addr, length uintptr, prot, flags, fd int, offset int64) (uintptr, error) munmap func(addr uintptr, length uintptr) error"
	if got != want {
		t.Fatalf("x/sys %s mmapper is\n  %s\nxsysMapper mirrors\n  %s", version, got, want)
	}
	if !strings.Contains(string(src), "func Mmap(fd int, offset int64, length int, prot int, flags int) (data []byte, err error) {\n\treturn mapper.Mmap(") {
		t.Fatal("x/sys unix.Mmap no longer maps through mapper")
	}
}

// vmFlags returns the VmFlags line of the mapping that holds addr, from
// /proc/self/smaps (the kernel may have merged it with a neighbour).
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return line
		}
	}
	t.Fatalf("no mapping holds %#x in /proc/self/smaps", addr)
	return ""
}

// requireTHP skips a test on a kernel without transparent huge pages,
// where the advice is refused (and ignored).
func requireTHP(t *testing.T) {
	t.Helper()
	if !KernelSupported() {
		t.Skip("no transparent huge pages in this kernel")
	}
}

func TestLargeAnonymousMappingsAreAdvised(t *testing.T) {
	requireTHP(t)
	if !Installed() {
		t.Fatal("not installed on linux: the x/sys check or the mapper lookup failed")
	}
	cases := []struct {
		name   string
		length int
		flags  int
		want   bool
	}{
		{"private anonymous 4 MiB", 4 << 20, unix.MAP_ANON | unix.MAP_PRIVATE, true},
		{"private anonymous 2 MiB", 2 << 20, unix.MAP_ANON | unix.MAP_PRIVATE, true},
		{"private anonymous 1 MiB", 1 << 20, unix.MAP_ANON | unix.MAP_PRIVATE, false},
		{"shared anonymous 4 MiB", 4 << 20, unix.MAP_ANON | unix.MAP_SHARED, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := Advised()
			b, err := unix.Mmap(-1, 0, c.length, unix.PROT_READ|unix.PROT_WRITE, c.flags)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := unix.Munmap(b); err != nil {
					t.Error(err)
				}
			}()
			if len(b) != c.length {
				t.Fatalf("mapping is %d bytes, asked %d", len(b), c.length)
			}
			b[0], b[len(b)-1] = 1, 2 // the mapping is usable
			flags := vmFlags(t, uintptr(unsafePointer(b)))
			hg := strings.Contains(flags, " hg")
			if hg != c.want || (Advised() > before) != c.want {
				t.Fatalf("advised %v (counter %d → %d, %s), want %v", hg, before, Advised(), flags, c.want)
			}
		})
	}
}

func TestFileMappingsAreLeftAlone(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "map")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(4 << 20); err != nil {
		t.Fatal(err)
	}
	before := Advised()
	b, err := unix.Mmap(int(f.Fd()), 0, 4<<20, unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	if flags := vmFlags(t, uintptr(unsafePointer(b))); strings.Contains(flags, " hg") || Advised() != before {
		t.Fatalf("a file mapping was advised: %s", flags)
	}
}
