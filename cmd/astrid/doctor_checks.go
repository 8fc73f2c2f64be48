package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/sandbox"
	"github.com/astrid-go/astrid/internal/store"
)

type doctorOptions struct {
	offline bool
	timeout time.Duration
	// getenv reads the environment (os.Getenv unless a test says).
	getenv func(string) string
}

// runDoctor runs every check on home, in the order a person would fix
// them: the files first, the network last.
func runDoctor(ctx context.Context, home string, o doctorOptions) []finding {
	if o.getenv == nil {
		o.getenv = os.Getenv
	}
	if _, err := os.Stat(home); errors.Is(err, fs.ErrNotExist) {
		return []finding{problemFinding("home", home+" does not exist yet", "astrid init (or any astrid command) creates it, 0700")}
	}
	out := checkHomeModes(home)
	cfg, cfgFinding := checkConfig(home)
	out = append(out, cfgFinding)
	out = append(out, checkSandbox(cfg)...)
	out = append(out, checkStore(home, cfg))
	out = append(out, checkDaemon(home)...)
	if o.offline {
		out = append(out, skippedFinding("provider", "--offline: the providers were not asked"))
	} else {
		out = append(out, checkProviders(ctx, home, cfg, o)...)
	}
	return out
}

// checkHomeModes holds $ASTRID_HOME to what config.Home promises: its
// directories yours and writable by you alone, its secret files readable
// by you alone.
func checkHomeModes(home string) []finding {
	var out []finding
	uid := os.Getuid()
	for _, dir := range config.PrivateDirs(home) {
		fi, err := os.Lstat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // created 0700 on first use
		case err != nil:
			out = append(out, problemFinding("home", fmt.Sprintf("%s: %v", dir, err), "check the path and its permissions"))
		case !fi.IsDir():
			out = append(out, problemFinding("home", dir+" is not a directory", "move it aside: mv "+dir+" "+dir+".old"))
		case owner(fi) != uid:
			out = append(out, problemFinding("home", fmt.Sprintf("%s belongs to uid %d, not you (uid %d)", dir, owner(fi), uid), fmt.Sprintf("chown -R %d %s", uid, dir)))
		case fi.Mode().Perm()&0o022 != 0:
			out = append(out, problemFinding("home", fmt.Sprintf("%s is writable by other users (mode %04o): they could plant capsules or change state", dir, fi.Mode().Perm()), "chmod 700 "+dir))
		}
	}
	p := config.Layout(home)
	for _, file := range []string{p.State, p.SecretsKey, p.Config} {
		fi, err := os.Lstat(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			out = append(out, problemFinding("home", fmt.Sprintf("%s: %v", file, err), "check the file and its permissions"))
		case owner(fi) != uid:
			out = append(out, problemFinding("home", fmt.Sprintf("%s belongs to uid %d, not you (uid %d)", file, owner(fi), uid), fmt.Sprintf("chown %d %s", uid, file)))
		case fi.Mode().Perm()&0o077 != 0:
			out = append(out, problemFinding("home", fmt.Sprintf("%s is readable or writable by other users (mode %04o)", file, fi.Mode().Perm()), "chmod 600 "+file))
		}
	}
	if len(out) == 0 {
		out = append(out, okFinding("home", home+" and its files are yours alone"))
	}
	return out
}

// owner is the uid that owns fi's file (-1 where the system does not say).
func owner(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// checkConfig loads config.toml; with a problem the rest of the checks use
// the defaults.
func checkConfig(home string) (config.Config, finding) {
	path := config.Layout(home).Config
	cfg, err := config.Load(path)
	if err != nil {
		return config.Default(), problemFinding("config", strings.ReplaceAll(err.Error(), "\n", "; "), "edit "+path+" at the line named (astrid init --force rewrites it with the commented defaults)")
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return cfg, okFinding("config", "no config.toml: every key at its default (astrid init writes a commented one)")
	}
	return cfg, okFinding("config", path+" decodes")
}

// checkSandbox is astrid sandbox check's verdict.
func checkSandbox(cfg config.Config) []finding {
	if cfg.Sandbox.Off() {
		return []finding{problemFinding("sandbox", `[sandbox] mode = "off": the processes capsules start run unconfined`, `set [sandbox] mode = "enforce" in config.toml (astrid sandbox check says whether this machine can)`)}
	}
	abi := sandbox.ABI()
	if err := sandbox.Need(abi); err != nil {
		return []finding{problemFinding("sandbox", fmt.Sprintf("cannot confine processes: %v", err),
			fmt.Sprintf("run Linux 6.12 or later with Landlock enabled (landlock in the lsm= boot parameter; this kernel offers ABI %d, %d is needed); until then shell commands and MCP servers will not start (or set [sandbox] mode = \"off\" to run them unconfined)", abi, sandbox.MinABI))}
	}
	scratch, err := os.MkdirTemp("", "astrid-doctor-*")
	if err != nil {
		return []finding{problemFinding("sandbox", fmt.Sprintf("self-test scratch directory: %v", err), "make $TMPDIR writable")}
	}
	defer os.RemoveAll(scratch)
	checks, err := sandbox.SelfTest(scratch)
	if err != nil {
		return []finding{problemFinding("sandbox", fmt.Sprintf("self-test: %v", err), "run astrid sandbox check for the details")}
	}
	var failed []string
	for _, c := range checks {
		if !c.OK {
			failed = append(failed, c.What)
		}
	}
	if len(failed) > 0 {
		return []finding{problemFinding("sandbox", "confinement does not hold: "+strings.Join(failed, "; "), "run astrid sandbox check for the details, and report it with its output")}
	}
	return []finding{okFinding("sandbox", fmt.Sprintf("Landlock ABI %d, seccomp; self-test: all %d escapes refused", abi, len(checks)))}
}

// checkStore opens state.db as any command would and has bbolt check
// every page. A missing file is fine: it is created on first use.
func checkStore(home string, cfg config.Config) finding {
	path := config.Layout(home).State
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return okFinding("store", "no state.db yet: created on first use")
	}
	if err != nil {
		return problemFinding("store", err.Error(), "check the file and its permissions")
	}
	st, err := store.Open(path, store.Options{Timeout: cfg.StoreLockWait.Duration})
	if errors.Is(err, store.ErrInUse) {
		return problemFinding("store", err.Error(), "wait for that process, or stop it (astrid stop for the daemon)")
	}
	if err != nil {
		return problemFinding("store", err.Error(), "stop astrid (astrid stop), move "+path+" aside and restore it from a backup; astrid starts a new one without it (stored values, secrets and sessions are then gone)")
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		fix := "stop astrid (astrid stop), copy " + path + " aside, then `bbolt compact -o state.new.db " + path + "` and move state.new.db in its place; or restore a backup"
		if errors.Is(err, store.ErrInUse) {
			fix = "wait for the process holding it, or stop it (astrid stop for the daemon)"
		}
		return problemFinding("store", err.Error(), fix)
	}
	return okFinding("store", fmt.Sprintf("%s is consistent (%s)", path, byteSize(fi.Size())))
}

// byteSize writes n bytes for a person (KiB, MiB).
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// checkDaemon finds the files a killed daemon left, and a daemon whose
// socket does not answer.
func checkDaemon(home string) []finding {
	p := daemon.PathsOf(home)
	pid, err := daemon.Running(home)
	switch {
	case errors.Is(err, daemon.ErrNotRunning):
		var stale []string
		for _, f := range []string{p.Pid, p.Socket, p.Status, p.Admin} {
			if _, err := os.Lstat(f); err == nil {
				stale = append(stale, f)
			}
		}
		if len(stale) > 0 {
			return []finding{problemFinding("daemon", "no daemon runs, but one that was killed left "+strings.Join(stale, ", "),
				"astrid start removes them as it starts; or remove them: rm -f "+strings.Join(stale, " "))}
		}
		return []finding{okFinding("daemon", "none runs; no stale socket or pid file")}
	case err != nil:
		return []finding{problemFinding("daemon", err.Error(), "check "+p.Run+" and its permissions")}
	case pid == 0:
		return []finding{okFinding("daemon", "a daemon is starting (its lock is held, no pid file yet)")}
	}
	if !serves(home) {
		return []finding{problemFinding("daemon", fmt.Sprintf("the daemon (pid %d) holds the lock but its socket %s does not answer", pid, p.Socket),
			fmt.Sprintf("astrid restart; if it hangs, kill %d and astrid start (see %s)", pid, p.Log))}
	}
	return []finding{okFinding("daemon", fmt.Sprintf("pid %d answers on %s", pid, p.Socket))}
}

// doctorProviders are the LLM providers doctor can reach: the capsule id,
// the base URL it uses when none is configured, and the path under it that
// lists models (GET, answered by any live server, with a key or not).
var doctorProviders = []struct{ id, defaultBase, probe string }{
	{"astrid-capsule-anthropic", "https://api.anthropic.com", "/v1/models"},
	{"astrid-capsule-openai", "https://api.openai.com/v1", "/models"},
}

// checkProviders asks each configured provider's server for its models
// list: any HTTP answer means it is reachable. A provider with neither a
// key nor a base_url (stored, or in the environment) is not in use and is
// skipped.
func checkProviders(ctx context.Context, home string, cfg config.Config, o doctorOptions) []finding {
	stored := storedProviderEnv(home, cfg)
	var out []finding
	for _, pr := range doctorProviders {
		check := "provider"
		name := strings.TrimPrefix(pr.id, "astrid-capsule-")
		base, keyFrom := stored[pr.id]["base_url"], stored[pr.id]["api_key"]
		if v := o.getenv(providerEnv[pr.id]["base_url"]); base == "" && v != "" {
			base = v
		}
		if v := providerEnv[pr.id]["api_key"]; keyFrom == "" && o.getenv(v) != "" {
			keyFrom = "env " + v
		}
		if base == "" && keyFrom == "" {
			out = append(out, skippedFinding(check, name+": not configured (no api_key, no base_url)"))
			continue
		}
		if base == "" {
			base = pr.defaultBase
		}
		url := strings.TrimRight(base, "/") + pr.probe
		status, err := probeHTTP(ctx, url, o.timeout)
		if err != nil {
			out = append(out, problemFinding(check, fmt.Sprintf("%s: %s did not answer: %v", name, url, err),
				fmt.Sprintf("check the network, or the base_url (printf %%s <url> | astrid capsule env set %s base_url); [egress] allow in config.toml must name a local server", pr.id)))
			continue
		}
		detail := fmt.Sprintf("%s: %s answered HTTP %d", name, url, status)
		if keyFrom == "" {
			detail += " (no api_key: a local server that needs none)"
		}
		out = append(out, okFinding(check, detail))
	}
	return out
}

// storedProviderEnv reads which provider [env] values are stored: base_url's
// value, and api_key as where it is ("stored"), never its value. A store
// that cannot be read yields nothing (checkStore says why).
func storedProviderEnv(home string, cfg config.Config) map[string]map[string]string {
	out := map[string]map[string]string{}
	path := config.Layout(home).State
	if _, err := os.Stat(path); err != nil {
		return out
	}
	st, err := store.Open(path, store.Options{Timeout: cfg.StoreLockWait.Duration})
	if err != nil {
		return out
	}
	defer st.Close()
	for _, pr := range doctorProviders {
		m := map[string]string{}
		if v, found, err := st.Config(pr.id).Get("base_url"); err == nil && found {
			m["base_url"] = string(v)
		}
		if names, err := st.Secrets(pr.id).List(); err == nil && slices.Contains(names, "api_key") {
			m["api_key"] = "stored"
		}
		out[pr.id] = m
	}
	return out
}

// probeHTTP GETs url and returns the status of whatever answered.
func probeHTTP(ctx context.Context, url string, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
