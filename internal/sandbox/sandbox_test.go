package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needLandlock skips where this kernel cannot confine at all: the
// refusal itself is tested by TestNeedNamesTheMissingFeature.
func needLandlock(t *testing.T) {
	t.Helper()
	if err := Need(ABI()); err != nil {
		t.Skipf("this kernel cannot confine: %v", err)
	}
}

// escBox is a workspace with Astrid's home inside it (the worst case: the
// agent started from ~), a secret outside both, and the policy a capsule
// granted fs_read and fs_write "*" gets.
type escBox struct {
	ws, home, outside, tmp string
	ro                     string // granted for reading only, like the system set
	policy                 Policy
}

func newEscBox(t *testing.T) escBox {
	t.Helper()
	b := escBox{ws: t.TempDir(), outside: t.TempDir(), tmp: t.TempDir(), ro: t.TempDir()}
	mustDo(t, os.WriteFile(filepath.Join(b.ro, "tool"), []byte("#!/bin/sh\necho read-only tool\n"), 0o755))
	b.home = filepath.Join(b.ws, ".astrid")
	mustDo(t, os.MkdirAll(filepath.Join(b.home, "run"), 0o700))
	mustDo(t, os.WriteFile(filepath.Join(b.home, "secrets.key"), []byte("HOME-SECRET"), 0o600))
	mustDo(t, os.WriteFile(filepath.Join(b.outside, "secret"), []byte("OUTSIDE-SECRET"), 0o600))
	mustDo(t, os.MkdirAll(filepath.Join(b.ws, "src"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(b.ws, "src", "main.txt"), []byte("workspace file"), 0o644))
	b.policy = Policy{
		Read:    append(append([]string(nil), DefaultSystemRead...), b.ws, b.ro),
		Write:   []string{b.ws, b.tmp},
		Devices: DefaultDevices,
		Exclude: []string{b.home},
	}
	return b
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// run runs script with bash in dir, confined by p, and returns its exit
// code and what it printed.
func runIn(t *testing.T, p Policy, dir, script string, env ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	release, err := Start(cmd, p)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	err = cmd.Wait()
	release()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("wait: %v", err)
		}
		code = ee.ExitCode()
	}
	return code, out.String()
}

// TestEscapesAreRefusedByTheOS runs what an attacker would try from an
// approved command; each must fail, and the file or peer it aimed at must
// be untouched.
func TestEscapesAreRefusedByTheOS(t *testing.T) {
	needLandlock(t)
	b := newEscBox(t)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	mustDo(t, err)
	defer tcp.Close()
	_, tcpPort, _ := net.SplitHostPort(tcp.Addr().String())
	sock := filepath.Join(b.home, "run", "astrid.sock")
	// The home's socket, reached through a name the workspace offers too.
	ux, err := net.Listen("unix", sock)
	mustDo(t, err)
	defer ux.Close()
	outsideSock := filepath.Join(b.outside, "other.sock")
	ux2, err := net.Listen("unix", outsideSock)
	mustDo(t, err)
	defer ux2.Close()
	mustDo(t, os.Symlink(filepath.Join(b.home, "secrets.key"), filepath.Join(b.ws, "link-to-key")))
	mustDo(t, os.Symlink(b.outside, filepath.Join(b.ws, "link-out")))
	self := os.Getpid()

	cases := []struct {
		name, script string
		says         string // part of what the refusal printed
	}{
		{"read the home's key", "cat .astrid/secrets.key", "Permission denied"},
		{"read the home's key by a symlink in the workspace", "cat link-to-key", "Permission denied"},
		{"read the home's key by its absolute path", "cat " + b.home + "/secrets.key", "Permission denied"},
		{"read the home through /proc/self/root", "cat /proc/self/root" + b.home + "/secrets.key", "Permission denied"},
		{"write into the home", "echo x > .astrid/new", "Permission denied"},
		{"make a capsule dir in the home", "mkdir .astrid/capsules", "Permission denied"},
		{"read a file outside the grants", "cat " + b.outside + "/secret", "Permission denied"},
		{"read outside by a symlink in the workspace", "cat link-out/secret", "Permission denied"},
		{"read /etc/passwd", "cat /etc/passwd", "Permission denied"},
		{"read /etc/shadow", "cat /etc/shadow", "Permission denied"},
		{"list /root", "ls /root", "Permission denied"},
		{"write the user's /tmp", "echo x > /tmp/astrid-escape-" + fmt.Sprint(self), "Permission denied"},
		{"write /dev/shm", "echo x > /dev/shm/astrid-escape", "Permission denied"},
		{"truncate a read-only file", "truncate -s0 " + b.ro + "/tool", "Permission denied"},
		{"truncate a read-only file by redirection", ": > " + b.ro + "/tool", "Permission denied"},
		{"remove a read-only file", "rm -f " + b.ro + "/tool", "Permission denied"},
		{"replace a read-only file by a rename", "echo x > n && mv -f n " + b.ro + "/tool", "Permission denied"},
		{"hard link a file from outside into the workspace", "ln " + b.outside + "/secret ./stolen && cat stolen", ""},
		{"rename the home's key out", "mv .astrid/secrets.key ./k", ""},
		{"connect to a loopback TCP port", "exec 3<>/dev/tcp/127.0.0.1/" + tcpPort, "Permission denied"},
		{"connect to the metadata address", "exec 3<>/dev/tcp/169.254.169.254/80", "Permission denied"},
		{"send UDP", "echo x > /dev/udp/127.0.0.1/53", "Permission denied"},
		{"connect to the daemon's unix socket", "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"" + sock + "\")'", "Permission"},
		{"connect to another unix socket", "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"" + outsideSock + "\")'", "Permission"},
		{"signal the process that started it", fmt.Sprintf("kill -0 %d", self), "not permitted"},
		{"signal init", "kill -0 1", "not permitted"},
		{"read the parent's environment", fmt.Sprintf("cat /proc/%d/environ", self), "Permission denied"},
		{"read the parent's memory map", fmt.Sprintf("cat /proc/%d/maps", self), "Permission denied"},
		{"ptrace-attach to the parent", fmt.Sprintf(`/usr/bin/python3 -c 'import ctypes, ctypes.util, sys; libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True); r = libc.ptrace(16, %d, 0, 0); print("errno", ctypes.get_errno()); sys.exit(0 if r == 0 else 1)'`, self), "errno 1"},
		{"new user namespace", "unshare -Ur true", "not permitted"},
		{"double fork and setsid, then read outside", "setsid bash -c 'cat " + b.outside + "/secret > esc.out 2>&1' & wait; sleep 0; cat esc.out; grep -q OUTSIDE esc.out && exit 0 || exit 1", "Permission denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runIn(t, b.policy, b.ws, tc.script)
			if code == 0 {
				t.Fatalf("%q succeeded confined; printed %q", tc.script, out)
			}
			if strings.Contains(out, "SECRET") {
				t.Fatalf("%q printed a secret: %q", tc.script, out)
			}
			if tc.says != "" && !strings.Contains(out, tc.says) {
				t.Fatalf("%q: want %q in %q", tc.script, tc.says, out)
			}
		})
	}
	// Nothing outside the grants changed.
	if got, _ := os.ReadFile(filepath.Join(b.home, "secrets.key")); string(got) != "HOME-SECRET" {
		t.Fatalf("the home's key is now %q", got)
	}
	for _, p := range []string{filepath.Join(b.home, "new"), filepath.Join(b.home, "capsules"), "/tmp/astrid-escape-" + fmt.Sprint(self), "/dev/shm/astrid-escape"} {
		if _, err := os.Lstat(p); err == nil {
			os.RemoveAll(p)
			t.Errorf("%s was created", p)
		}
	}
	if got, err := os.ReadFile(filepath.Join(b.ro, "tool")); err != nil || !strings.Contains(string(got), "read-only tool") {
		t.Fatalf("the read-only file changed: %q %v", got, err)
	}
}

// TestGrantedWorkWorks is the control: inside its grants a confined
// command reads, writes, creates, renames and removes, uses /dev/null, and
// finds its private temporary directory.
func TestGrantedWorkWorks(t *testing.T) {
	needLandlock(t)
	b := newEscBox(t)
	b.home = filepath.Join(b.outside, "astrid-home") // the usual case: the home is elsewhere
	b.policy.Exclude = []string{b.home}
	script := `set -e
cat src/main.txt
echo new > new.txt
mkdir -p a/b && echo deep > a/b/c.txt && mv a/b/c.txt src/moved.txt
ln -s src/moved.txt link && cat link
rm -r a && rm new.txt
echo gone > /dev/null
echo t > "$TMPDIR/t" && cat "$TMPDIR/t"
ls /usr/bin > /dev/null
`
	code, out := runIn(t, b.policy, b.ws, script, "TMPDIR="+b.tmp)
	if code != 0 {
		t.Fatalf("granted work failed (%d): %s", code, out)
	}
	for _, want := range []string{"workspace file", "deep", "t"} {
		if !strings.Contains(out, want) {
			t.Fatalf("want %q in %q", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(b.ws, "src", "moved.txt")); err != nil {
		t.Fatal(err)
	}
}

// TestTopOfAWorkspaceHoldingTheHome: with the home inside the workspace
// the workspace is granted entry by entry around it: existing files stay
// writable, the home is out, and a new file at the top cannot be created
// (a rule on the top would reach the home).
func TestTopOfAWorkspaceHoldingTheHome(t *testing.T) {
	needLandlock(t)
	b := newEscBox(t)
	code, out := runIn(t, b.policy, b.ws, "echo more >> src/main.txt && echo x > src/new && ls -a . && ls .astrid")
	if code != 0 {
		t.Fatalf("work below the top failed: %s", out)
	}
	if !strings.Contains(out, "secrets.key") {
		t.Fatalf("listing the home's names is allowed (its contents are not): %q", out)
	}
	if code, out := runIn(t, b.policy, b.ws, "echo x > top.txt"); code == 0 {
		t.Fatalf("a new file at the top of a workspace holding the home was created: %q", out)
	}
}

// TestTheCallerIsNotConfined: the thread confined for a child is thrown
// away; the process that started it still reads what its child could not.
func TestTheCallerIsNotConfined(t *testing.T) {
	needLandlock(t)
	b := newEscBox(t)
	for i := 0; i < 20; i++ {
		if code, _ := runIn(t, b.policy, b.ws, "cat "+b.outside+"/secret"); code == 0 {
			t.Fatal("the child read outside its grants")
		}
		if got, err := os.ReadFile(filepath.Join(b.outside, "secret")); err != nil || string(got) != "OUTSIDE-SECRET" {
			t.Fatalf("the caller lost access after confining a child: %v", err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("the caller lost the network after confining a child: %v", err)
		}
		l.Close()
	}
}

// TestNetworkThroughOneAllowedPort: a policy with a port lets TCP reach
// that port and no other.
func TestNetworkThroughOneAllowedPort(t *testing.T) {
	needLandlock(t)
	b := newEscBox(t)
	allowed, err := net.Listen("tcp", "127.0.0.1:0")
	mustDo(t, err)
	defer allowed.Close()
	other, err := net.Listen("tcp", "127.0.0.1:0")
	mustDo(t, err)
	defer other.Close()
	go func() {
		for {
			c, err := allowed.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	port := uint16(allowed.Addr().(*net.TCPAddr).Port)
	b.policy.ConnectTCP = []uint16{port}
	code, out := runIn(t, b.policy, b.ws, fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3", port))
	if code != 0 || !strings.Contains(out, "hello") {
		t.Fatalf("the allowed port: %d %q", code, out)
	}
	if code, out := runIn(t, b.policy, b.ws, fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", other.Addr().(*net.TCPAddr).Port)); code == 0 {
		t.Fatalf("another port was reached: %q", out)
	}
	if code, out := runIn(t, b.policy, b.ws, "echo x > /dev/udp/127.0.0.1/53"); code == 0 {
		t.Fatalf("UDP was sent: %q", out)
	}
}

func TestNeedNamesTheMissingFeature(t *testing.T) {
	for abi, want := range map[int]string{0: "no Landlock", 2: "ABI 2", 5: "ABI 5"} {
		err := Need(abi)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `mode = "off"`) {
			t.Errorf("Need(%d) = %v; want it to name %q and the setting", abi, err, want)
		}
	}
	if auditArch != 0 {
		if err := Need(minABI); err != nil {
			t.Errorf("Need(%d) = %v", minABI, err)
		}
	}
}

// TestAPathThatDoesNotExist is skipped, not an error, and reported.
func TestAPathThatDoesNotExist(t *testing.T) {
	p := Policy{Read: []string{"/no/such/dir"}, Write: []string{t.TempDir()}}
	rules, skipped, err := p.resolve()
	if err != nil || len(rules) != 1 || len(skipped) != 1 || skipped[0].Reason != "does not exist" {
		t.Fatalf("rules %v skipped %v err %v", rules, skipped, err)
	}
	if _, _, err := (Policy{Read: []string{"relative"}}).resolve(); err == nil {
		t.Fatal("a relative path was taken")
	}
	// The whole file system, however spelled, keeps the process from
	// starting, with the grant named.
	link := filepath.Join(t.TempDir(), "root")
	mustDo(t, os.Symlink("/", link))
	for _, p := range []Policy{{Read: []string{"/"}}, {Write: []string{"/."}}, {Read: []string{link}}, {Read: []string{"/usr/.."}}} {
		if _, _, err := p.resolve(); err == nil || !strings.Contains(err.Error(), "whole file system") {
			t.Errorf("%+v: %v", p, err)
		}
	}
}

// ownBox is escBox with an installed capsule's directory in the home (its
// server script and a symlink to the home's key), another capsule's beside
// it, and the policy an MCP server of the first gets.
func ownBox(t *testing.T) (escBox, string, string) {
	t.Helper()
	b := newEscBox(t)
	own := filepath.Join(b.home, "capsules", "mine")
	other := filepath.Join(b.home, "capsules", "theirs")
	mustDo(t, os.MkdirAll(own, 0o700))
	mustDo(t, os.MkdirAll(other, 0o700))
	mustDo(t, os.WriteFile(filepath.Join(own, "server.sh"), []byte("#!/bin/sh\necho own server runs\n"), 0o700))
	mustDo(t, os.WriteFile(filepath.Join(other, "secret.txt"), []byte("THEIR-SECRET"), 0o600))
	mustDo(t, os.Symlink(filepath.Join(b.home, "secrets.key"), filepath.Join(own, "key-link")))
	mustDo(t, os.Symlink(other, filepath.Join(own, "theirs-link")))
	b.policy.Own = []string{own}
	return b, own, other
}

// A capsule's own directory in the home is readable and runnable by its
// server; everything else of the home stays out, through it too.
func TestOwnDirectoryInTheHome(t *testing.T) {
	needLandlock(t)
	b, own, other := ownBox(t)
	if code, out := runIn(t, b.policy, b.ws, own+"/server.sh"); code != 0 || !strings.Contains(out, "own server runs") {
		t.Fatalf("the server in its own directory did not run: %d %q", code, out)
	}
	for _, tc := range []struct{ name, script string }{
		{"read the home's key", "cat " + b.home + "/secrets.key"},
		{"read the home's key by a symlink in its own directory", "cat " + own + "/key-link"},
		{"read another capsule's file", "cat " + other + "/secret.txt"},
		{"read another capsule's file by a symlink in its own directory", "cat " + own + "/theirs-link/secret.txt"},
		{"write into its own directory", "echo x > " + own + "/new"},
		{"change its own server", "echo 'echo evil' >> " + own + "/server.sh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, out := runIn(t, b.policy, b.ws, tc.script); code == 0 {
				t.Fatalf("allowed: %q", out)
			}
		})
	}
	if got, _ := os.ReadFile(filepath.Join(own, "server.sh")); strings.Contains(string(got), "evil") {
		t.Fatal("the server's own file was changed")
	}
}

// An own directory that is, holds or resolves to the home is refused
// before anything starts.
func TestOwnDirectoryThatReachesTheHomeIsRefused(t *testing.T) {
	b, own, _ := ownBox(t)
	link := filepath.Join(b.outside, "home-link")
	mustDo(t, os.Symlink(b.home, link))
	file := filepath.Join(own, "server.sh")
	for _, tc := range []struct{ name, own, says string }{
		{"the home itself", b.home, "is or holds a directory no grant reaches"},
		{"a symlink to the home", link, "is or holds a directory no grant reaches"},
		{"the home's parent", b.ws, "is or holds a directory no grant reaches"},
		{"the root", "/", "is or holds a directory no grant reaches"},
		{"a file", file, "is not a directory"},
		{"a relative path", "capsules/mine", "not an absolute path"},
		{"a missing directory", filepath.Join(b.home, "capsules", "gone"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := b.policy
			p.Own = []string{tc.own}
			if _, _, err := p.resolve(); err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("resolve: %v, want %q", err, tc.says)
			}
		})
	}
	p := b.policy
	if _, _, err := p.resolve(); err != nil {
		t.Fatalf("the capsule's own directory: %v", err)
	}
}
