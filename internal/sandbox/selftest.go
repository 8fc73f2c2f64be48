package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Check is one line of the self-test: something a confined process did or
// was refused, and whether that is what confinement promises.
type Check struct {
	What string // "reads its workspace", "refused: reads a file outside its grants"
	OK   bool
	Got  string // what happened when not OK
}

// SelfTest confines a few shell commands in scratch directories under
// scratch (a fresh one each run) and checks that the granted work runs and
// each escape is refused by the OS. It needs /bin/sh. It returns nil and
// Need's error where this kernel cannot confine.
func SelfTest(scratch string) ([]Check, error) {
	if err := Need(ABI()); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp(scratch, "astrid-sandbox-check-")
	if err != nil {
		return nil, fmt.Errorf("sandbox self-test: %w", err)
	}
	defer os.RemoveAll(root)
	ws, home, outside := filepath.Join(root, "workspace"), filepath.Join(root, "workspace", ".astrid"), filepath.Join(root, "outside")
	for _, d := range []string{ws, home, outside, filepath.Join(ws, "src")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox self-test: %w", err)
		}
	}
	for path, body := range map[string]string{filepath.Join(ws, "f"): "ok", filepath.Join(home, "secrets.key"): "secret", filepath.Join(outside, "f"): "secret"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			return nil, fmt.Errorf("sandbox self-test: %w", err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sandbox self-test: %w", err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	p := Policy{Read: append(append([]string(nil), DefaultSystemRead...), ws), Write: []string{ws}, Devices: DefaultDevices, Exclude: []string{home}}
	steps := []struct {
		what, script string
		succeed      bool
	}{
		{"reads and writes its workspace", "cat f && echo x >> f && echo x > src/g && rm src/g", true},
		{"runs programs of the system set", "ls /usr/bin > /dev/null", true},
		{"refused: reads Astrid's home inside its workspace", "cat .astrid/secrets.key", false},
		{"refused: reads a file outside its grants", "cat " + outside + "/f", false},
		{"refused: writes outside its grants", "echo x > " + outside + "/g", false},
		{"refused: connects to a TCP port", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port), false},
		{"refused: sends UDP", "echo x > /dev/udp/127.0.0.1/53", false},
		{"refused: signals a process outside its tree", fmt.Sprintf("kill -0 %d", os.Getpid()), false},
		{"refused: reads another process's environment", fmt.Sprintf("cat /proc/%d/environ", os.Getpid()), false},
	}
	var checks []Check
	for _, s := range steps {
		cmd := exec.Command("/bin/sh", "-c", s.script)
		cmd.Dir, cmd.Env = ws, []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		release, err := Start(cmd, p)
		if err != nil {
			return checks, err
		}
		err = cmd.Wait()
		release()
		c := Check{What: s.what, OK: (err == nil) == s.succeed}
		if !c.OK {
			c.Got = strings.TrimSpace(out.String())
			if s.succeed {
				c.Got = fmt.Sprintf("failed: %v: %s", err, c.Got)
			} else {
				c.Got = "it succeeded: " + c.Got
			}
		}
		checks = append(checks, c)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "g")); b != nil {
		checks = append(checks, Check{What: "nothing outside the grants changed", Got: "a file appeared outside"})
	}
	return checks, nil
}
