// Package mcptest gives tests the official npm MCP servers the project pins
// in testdata/mcp (package.json and its lockfile), installed on demand by
// scripts/npm-ci.sh. It owns finding and installing them, nothing else; it
// must not be imported outside tests.
package mcptest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Servers locates node and the entry points of the pinned npm servers.
type Servers struct {
	// Node is the node executable found on PATH.
	Node string
	// Filesystem is @modelcontextprotocol/server-filesystem's dist/index.js;
	// it takes the directories it may touch as arguments.
	Filesystem string
	// Everything is @modelcontextprotocol/server-everything's dist/index.js;
	// it takes the transport ("stdio") as its argument.
	Everything string
}

var (
	once    sync.Once
	servers Servers
	errNode error // node is absent: skip
	errInst error // installing failed: fail
)

// NPM returns the servers, running scripts/npm-ci.sh first (once per test
// process) so that node_modules matches the lockfile. The test is skipped,
// saying so, only when node or npm is absent; a failed install fails it.
func NPM(t testing.TB) Servers {
	t.Helper()
	once.Do(install)
	if errNode != nil {
		t.Skipf("MCP end-to-end test skipped: %v", errNode)
	}
	if errInst != nil {
		t.Fatalf("MCP test servers: %v", errInst)
	}
	return servers
}

func install() {
	node, err := exec.LookPath("node")
	if err != nil {
		errNode = fmt.Errorf("node is not installed (%w)", err)
		return
	}
	if _, err := exec.LookPath("npm"); err != nil {
		errNode = fmt.Errorf("npm is not installed (%w)", err)
		return
	}
	root, err := repoRoot()
	if err != nil {
		errInst = err
		return
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "npm-ci.sh"))
	if out, err := cmd.CombinedOutput(); err != nil {
		errInst = fmt.Errorf("scripts/npm-ci.sh: %w\n%s", err, out)
		return
	}
	mods := filepath.Join(root, "testdata", "mcp", "node_modules", "@modelcontextprotocol")
	servers = Servers{
		Node:       node,
		Filesystem: filepath.Join(mods, "server-filesystem", "dist", "index.js"),
		Everything: filepath.Join(mods, "server-everything", "dist", "index.js"),
	}
	for _, p := range []string{servers.Filesystem, servers.Everything} {
		if _, err := os.Stat(p); err != nil {
			errInst = fmt.Errorf("after scripts/npm-ci.sh: %w", err)
			return
		}
	}
}

// repoRoot is the repository root (the directory holding scripts/npm-ci.sh),
// above the test's directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		// The script, not the nearest go.mod: the bench module (bench/)
		// has a go.mod of its own below the repository's root.
		if _, err := os.Stat(filepath.Join(dir, "scripts", "npm-ci.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("mcptest: no scripts/npm-ci.sh above the working directory")
		}
		dir = parent
	}
}
