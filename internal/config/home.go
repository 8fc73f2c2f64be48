package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// HomeEnv names the environment variable that overrides the state directory.
const HomeEnv = "ASTRID_HOME"

// Paths is the layout of a state directory (DESIGN §4, "State dir").
type Paths struct {
	Home       string // the directory itself
	Config     string // config.toml
	State      string // state.db (internal/store)
	SecretsKey string // secrets.key (internal/store)
	Capsules   string // capsules/: operator-installed capsules
	Skills     string // skills/: the operator's skill library (<name>/SKILL.md)
	Principals string // home/: one home://  directory per principal
	WasmCache  string // cache/wasm/: compiled modules
	Run        string // run/: sockets and pid files
	Logs       string // logs/
	Audit      string // audit/: the signed audit chains (internal/audit)
	// ClusterSecret is nats/cluster.secret: the secret an embedded NATS
	// node of this machine only creates when [nats] names none
	// (natsbus.EnsureClusterSecret; docs/nats.md).
	ClusterSecret string
}

// Layout names the files and directories under home.
func Layout(home string) Paths {
	return Paths{
		Home:       home,
		Config:     filepath.Join(home, "config.toml"),
		State:      filepath.Join(home, "state.db"),
		SecretsKey: filepath.Join(home, "secrets.key"),
		Capsules:   filepath.Join(home, "capsules"),
		Skills:     filepath.Join(home, "skills"),
		Principals: filepath.Join(home, "home"),
		WasmCache:  filepath.Join(home, "cache", "wasm"),
		Run:        filepath.Join(home, "run"),
		Logs:       filepath.Join(home, "logs"),
		Audit:      filepath.Join(home, "audit"),

		ClusterSecret: filepath.Join(home, "nats", "cluster.secret"),
	}
}

// Home returns the absolute state directory ($ASTRID_HOME, else ~/.astrid),
// creating it and its subdirectories 0700. It refuses a directory, or
// subdirectory, that other users can write to: they could plant capsules,
// poison the wasm cache or replace the state.
func Home() (string, error) {
	dir, err := HomeDir()
	if err != nil {
		return "", err
	}
	for _, d := range PrivateDirs(dir) {
		if err := ensurePrivateDir(d); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// HomeDir returns the absolute state directory Home would use, touching
// nothing (astrid doctor examines it as it is).
func HomeDir() (string, error) {
	dir := os.Getenv(HomeEnv)
	if dir == "" {
		userHome, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("config: no $%s and no user home directory: %w", HomeEnv, err)
		}
		dir = filepath.Join(userHome, ".astrid")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("config: astrid home %s: %w", dir, err)
	}
	return abs, nil
}

// PrivateDirs are the directories of home Home creates 0700 and refuses
// when other users may write to them.
func PrivateDirs(home string) []string {
	p := Layout(home)
	return []string{p.Home, p.Capsules, p.Principals, p.WasmCache, p.Run, p.Logs, p.Audit}
}

func ensurePrivateDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("config: create %s: %w", dir, err)
		}
		fi, err = os.Stat(dir)
	}
	if err != nil {
		return fmt.Errorf("config: astrid home: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("config: %s is not a directory", dir)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("config: refusing %s: it is writable by other users (mode %04o), who could plant capsules or change state; fix it with: chmod 700 %s", dir, perm, dir)
	}
	return nil
}
