//go:build linux

package sandbox

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Real toolchains run confined in a workspace (issue 28, "Show"): each
// works with nothing but DefaultSystemRead, DefaultDevices, the workspace
// and a private temporary directory (its HOME and TMPDIR), and each has a
// control showing that the same toolchain cannot reach past them.

// systemPATH is where a confined toolchain's programs are looked up: the
// system's directories, never the user's (a pyenv or nvm shim in ~ is not
// readable confined, and should not be).
const systemPATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// needConfinement skips when this kernel cannot confine.
func needConfinement(tb testing.TB) {
	tb.Helper()
	if err := Need(ABI()); err != nil {
		tb.Skipf("the kernel cannot enforce: %v", err)
	}
}

// lookSystem finds name in dirs (a PATH list), as exec.LookPath would.
func lookSystem(name, dirs string) (string, bool) {
	for _, d := range filepath.SplitList(dirs) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// goDir is the directory of the go command on the user's PATH, "" when
// Go is not installed.
func goDir() string {
	p, err := exec.LookPath("go")
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return filepath.Dir(p)
}

// confinedPATH is systemPATH with the go command's directory in front.
func confinedPATH() string {
	if d := goDir(); d != "" {
		return d + ":" + systemPATH
	}
	return systemPATH
}

// needTool skips when name is not installed where a confined process
// looks for it.
func needTool(tb testing.TB, name string) string {
	tb.Helper()
	p, ok := lookSystem(name, confinedPATH())
	if !ok {
		if _, err := exec.LookPath(name); err == nil {
			tb.Skipf("%s is installed only outside the system directories (%s), which a confined process cannot read", name, systemPATH)
		}
		tb.Skipf("%s is not installed", name)
	}
	return p
}

// grantedRead reports whether path lies under an entry of DefaultSystemRead.
func grantedRead(path string) bool {
	for _, r := range DefaultSystemRead {
		if path == r || strings.HasPrefix(path, r+"/") {
			return true
		}
	}
	return false
}

// box is one confined workspace: ws is the workspace (writable), priv the
// private temporary directory (writable; HOME and TMPDIR), outside a
// directory next to them that no grant reaches.
type box struct {
	ws, priv, outside string
	read              []string
	env               []string
}

func newBox(t *testing.T) *box {
	t.Helper()
	needConfinement(t)
	b := &box{ws: t.TempDir(), priv: t.TempDir(), outside: t.TempDir()}
	b.read = append([]string(nil), DefaultSystemRead...)
	if d := goDir(); d != "" && !grantedRead(d) {
		// A Go installed outside the system set (e.g. under ~/sdk): its
		// root is what the toolchain needs, and only that.
		b.read = append(b.read, filepath.Dir(d))
	}
	b.env = []string{
		"PATH=" + confinedPATH(),
		"HOME=" + b.priv,
		"TMPDIR=" + b.priv,
		"LANG=C.UTF-8",
		// Go: caches in the private directory, no network, this toolchain.
		"GOCACHE=" + filepath.Join(b.priv, "gocache"),
		"GOPATH=" + filepath.Join(b.priv, "gopath"),
		"GOFLAGS=-mod=mod",
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
		"GOTELEMETRY=off",
		// git: who commits.
		"GIT_AUTHOR_NAME=Confined Tester",
		"GIT_AUTHOR_EMAIL=confined@example.invalid",
		"GIT_COMMITTER_NAME=Confined Tester",
		"GIT_COMMITTER_EMAIL=confined@example.invalid",
		// npm: offline, no registry reachable, nothing phoning home.
		"npm_config_cache=" + filepath.Join(b.priv, "npm-cache"),
		"npm_config_offline=true",
		"npm_config_registry=http://127.0.0.1:9/",
		"npm_config_update_notifier=false",
		"npm_config_audit=false",
		"npm_config_fund=false",
	}
	return b
}

// run runs script with bash -c in the workspace, confined; it returns the
// combined output and the exit code.
func (b *box) run(t *testing.T, script string) (string, int) {
	t.Helper()
	bash := needTool(t, "bash")
	cmd := exec.Command(bash, "-c", script)
	cmd.Dir = b.ws
	cmd.Env = b.env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	release, err := Start(cmd, Policy{
		Read:    b.read,
		Write:   []string{b.ws, b.priv},
		Devices: DefaultDevices,
	})
	if err != nil {
		t.Fatalf("sandbox.Start: %v", err)
	}
	err = cmd.Wait()
	release()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("wait: %v", err)
		}
		code = ee.ExitCode()
	}
	return out.String(), code
}

// ok runs script and fails the test unless it exits 0.
func (b *box) ok(t *testing.T, script string) string {
	t.Helper()
	out, code := b.run(t, script)
	if code != 0 {
		t.Fatalf("confined %q: exit %d\n%s", script, code, out)
	}
	return out
}

// refused runs script and fails the test unless it exits non-zero with
// an output that contains one of want.
func (b *box) refused(t *testing.T, script string, want ...string) string {
	t.Helper()
	out, code := b.run(t, script)
	if code == 0 {
		t.Fatalf("confined %q succeeded; the sandbox should have refused it\n%s", script, out)
	}
	for _, w := range want {
		if strings.Contains(out, w) {
			if len(out) > 600 {
				out = out[:600] + "…"
			}
			t.Logf("refused as it should be: %s\n%s", script, out)
			return out
		}
	}
	t.Fatalf("confined %q: exit %d, but the output names none of %q\n%s", script, code, want, out)
	return out
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// unique is a name no other run uses.
func unique(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// absent fails the test if path exists (the refused write got through).
func absent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists after a refused write (err %v)", path, err)
	}
}

func TestToolchainGit(t *testing.T) {
	git := needTool(t, "git")
	b := newBox(t)
	writeFiles(t, b.ws, map[string]string{"hello.txt": "hello\n"})
	out := b.ok(t, `set -e
git init -q -b main .
git add hello.txt
git status --short
git commit -q -m "first, confined"
git status
git log --format='%an <%ae> %s'`)
	for _, want := range []string{"A  hello.txt", "nothing to commit, working tree clean", "Confined Tester <confined@example.invalid> first, confined"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The commit is real: read back unconfined.
	log, err := exec.Command(git, "-C", b.ws, "log", "--format=%s").Output()
	if err != nil || strings.TrimSpace(string(log)) != "first, confined" {
		t.Errorf("unconfined git log: %q, %v", log, err)
	}

	// Control: a repository outside the grants can be neither read (git
	// may enter the directory, but not open .git, so it sees no
	// repository) nor written.
	other := filepath.Join(b.outside, "other")
	if out, err := exec.Command(git, "init", "-q", other).CombinedOutput(); err != nil {
		t.Fatalf("git init %s: %v\n%s", other, err, out)
	}
	b.refused(t, "git -C "+other+" status", "not a git repository", "Permission denied")
	b.refused(t, "cat "+other+"/.git/HEAD", "Permission denied")
	b.refused(t, "git -C "+b.outside+" init -q fresh", "Permission denied")
	absent(t, filepath.Join(b.outside, "fresh"))
}

func TestToolchainGo(t *testing.T) {
	needTool(t, "go")
	b := newBox(t)
	writeFiles(t, b.ws, map[string]string{
		"go.mod": "module example.com/confined\n\ngo 1.22\n",
		"add.go": "package confined\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
		"add_test.go": `package confined

import (
	"os"
	"testing"
)

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("2+3 != 5")
	}
	// The test binary may write in its workspace.
	if err := os.WriteFile("from-test.txt", []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
}
`,
	})
	out := b.ok(t, "go test -count=1 ./...")
	if !strings.Contains(out, "ok  \texample.com/confined") {
		t.Errorf("go test output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(b.ws, "from-test.txt")); err != nil {
		t.Errorf("the confined test's file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.priv, "gocache")); err != nil {
		t.Errorf("GOCACHE in the private directory: %v", err)
	}

	// Control: the same toolchain cannot put its output outside.
	target := filepath.Join(b.outside, "prog")
	b.refused(t, "go build -o "+target+" .", "permission denied")
	absent(t, target)
}

func TestToolchainPython(t *testing.T) {
	needTool(t, "python3")
	b := newBox(t)
	out := b.ok(t, `python3 -c "
import json, os, sys, tempfile
open('made-by-python.txt', 'w').write('ok')
with tempfile.NamedTemporaryFile(dir=os.environ['TMPDIR']) as f:
    f.write(b'x')
print(json.dumps({'major': sys.version_info[0], 'cwd': os.getcwd()}))
"`)
	if !strings.Contains(out, `{"major": 3, "cwd": "`+b.ws+`"}`) {
		t.Errorf("python3 output:\n%s", out)
	}
	if body, err := os.ReadFile(filepath.Join(b.ws, "made-by-python.txt")); err != nil || string(body) != "ok" {
		t.Errorf("made-by-python.txt: %q, %v", body, err)
	}

	// Control: the user's /tmp is not writable.
	target := filepath.Join(os.TempDir(), unique("astrid-sandbox-probe-"))
	t.Cleanup(func() { os.Remove(target) })
	b.refused(t, `python3 -c "open('`+target+`', 'w')"`, "PermissionError")
	absent(t, target)
}

func TestToolchainNode(t *testing.T) {
	needTool(t, "node")
	b := newBox(t)
	out := b.ok(t, `node -e "
const fs = require('fs');
fs.writeFileSync('made-by-node.txt', 'ok');
console.log('node', process.version, 'sum', [1, 2, 3].reduce((a, b) => a + b));
"`)
	if !strings.Contains(out, "sum 6") {
		t.Errorf("node output:\n%s", out)
	}
	if body, err := os.ReadFile(filepath.Join(b.ws, "made-by-node.txt")); err != nil || string(body) != "ok" {
		t.Errorf("made-by-node.txt: %q, %v", body, err)
	}

	// Control: the user's real home is not writable.
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skipf("no home directory to try: %v", err)
	}
	target := filepath.Join(home, unique(".astrid-sandbox-probe-"))
	t.Cleanup(func() { os.Remove(target) })
	b.refused(t, `node -e "require('fs').writeFileSync('`+target+`', 'x')"`, "EACCES")
	absent(t, target)
}

func TestToolchainNpm(t *testing.T) {
	needTool(t, "npm")
	needTool(t, "node")
	b := newBox(t)
	pkg := map[string]string{
		"package.json": `{
  "name": "confined-pkg",
  "version": "1.0.0",
  "private": true,
  "scripts": { "test": "node test.js" }
}
`,
		"index.js": "module.exports = (a, b) => a + b;\n",
		"test.js": `const assert = require('assert');
const add = require('./index.js');
assert.strictEqual(add(2, 3), 5);
require('fs').writeFileSync('made-by-npm-test.txt', 'ok');
console.log('confined npm test passed');
`,
	}
	writeFiles(t, b.ws, pkg)
	out := b.ok(t, "npm test --offline")
	if !strings.Contains(out, "confined npm test passed") {
		t.Errorf("npm test output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(b.ws, "made-by-npm-test.txt")); err != nil {
		t.Errorf("the npm test's file: %v", err)
	}

	// Control: a package outside the grants cannot be run.
	other := filepath.Join(b.outside, "other-pkg")
	writeFiles(t, other, pkg)
	b.refused(t, "npm test --offline --prefix "+other, "EACCES", "permission denied")
	absent(t, filepath.Join(other, "made-by-npm-test.txt"))
}
