package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A listen address off loopback is refused when config.toml is read,
// naming the key and its line, before any daemon could listen on it.
func TestAdminListenMustBeLoopback(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", "[::]:8088", ":8088", "192.168.1.2:80", "example.com:0", "127.0.0.1.nip.io:0", "127.0.0.1"} {
		path := filepath.Join(t.TempDir(), "config.toml")
		body := "[admin]\nenabled = true\nlisten = \"" + listen + "\"\n"
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), "admin.listen") || !strings.Contains(err.Error(), ":3:") {
			t.Errorf("listen = %q: err = %v, want one naming admin.listen at line 3", listen, err)
		}
	}
	for _, listen := range []string{"127.0.0.1:0", "[::1]:8088", "localhost:9999"} {
		path := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(path, []byte("[admin]\nlisten = \""+listen+"\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if c, err := Load(path); err != nil || c.Admin.Listen != listen || !c.Admin.Enabled {
			t.Errorf("listen = %q: %+v, %v", listen, c.Admin, err)
		}
	}
}
