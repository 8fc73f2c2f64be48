package gate

import (
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

// The gate sits on every file and network syscall; these measure one check
// against a manifest of realistic size.

func benchGate(b *testing.B) *Gate {
	b.Helper()
	return mustGate(b, manifest.Capabilities{
		FSRead:      []string{"*", "home://", "cwd://data", "/usr/share/dict"},
		FSWrite:     []string{"*", "home://notes"},
		Net:         []string{"api.github.com", "*.example.com", "registry.npmjs.org"},
		NetConnect:  []string{"db.internal:5432", "redis.internal:*"},
		HostProcess: []string{"npx", "uvx"},
	})
}

func BenchmarkFSRead(b *testing.B) {
	g := benchGate(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.FSRead("alice", "/workspace/internal/gate/fs.go"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFSReadHomeScheme(b *testing.B) {
	g := benchGate(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.FSRead("alice", "home://notes/today.md"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFSReadDenied(b *testing.B) {
	g := benchGate(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.FSRead("alice", "/etc/passwd"); err == nil {
			b.Fatal("allowed")
		}
	}
}

func BenchmarkNet(b *testing.B) {
	g := benchGate(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := g.Net("v2.api.example.com"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNetConnect(b *testing.B) {
	g := benchGate(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := g.NetConnect("redis.internal", 6379); err != nil {
			b.Fatal(err)
		}
	}
}
