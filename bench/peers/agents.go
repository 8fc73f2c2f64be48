package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// agent is one CLI measured: how to run one turn of it.
type agent struct {
	name, binName, bin string
	args, env          []string
	setup, teardown    func() error
	samples            []sample
	failure            string
}

// once runs one turn through the procrun helper and returns its figures
// and output; ok when the output holds the fake model's answer.
func (a *agent) once(ws string) (sample, string) {
	stats, err := os.CreateTemp("", "peers-stats-")
	if err != nil {
		return sample{}, err.Error()
	}
	stats.Close()
	defer os.Remove(stats.Name())
	self, _ := os.Executable()
	cmd := exec.Command(self, append([]string{"-procrun", stats.Name(), a.bin}, a.args...)...)
	cmd.Dir, cmd.Env = ws, append(os.Environ(), a.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	var s sample
	data, _ := os.ReadFile(stats.Name())
	var wall, cpu int64
	if _, err := fmt.Sscan(string(data), &wall, &cpu, &s.rssKiB); err != nil {
		return s, out.String()
	}
	s.wall, s.cpu = time.Duration(wall), time.Duration(cpu)
	s.ok = strings.Contains(out.String(), answer)
	return s, out.String()
}

// version is the agent's --version, first line.
func (a *agent) version() string {
	out, err := exec.Command(a.bin, "--version").CombinedOutput()
	if err != nil {
		return "?"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.ReplaceAll(line, "|", "/")
}

func lookPath(name string) string {
	p, _ := exec.LookPath(name)
	return p
}

// homeDir makes a throwaway directory under dir.
func homeDir(dir, name string) string {
	p := filepath.Join(dir, name)
	_ = os.MkdirAll(p, 0o700)
	return p
}

// isolated is the environment that keeps an agent's config, caches and
// state in its own throwaway home.
func isolated(home string) []string {
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local/state"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "NO_COLOR=1", "CI=1"}
}

func write(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o600)
}

// allAgents are astrid's two paths and the peers, each pointed at the
// fake server at url.
func allAgents(url, dir, ws, astridBin string) []*agent {
	v1 := url + "/v1"
	key := "sk-bench"
	var agents []*agent

	astridPrompt := []string{"-p", prompt, "--provider", "openai", "--model", "fake-model"}
	inproc := &agent{name: "astrid in-process", binName: "astrid", bin: astridBin, args: append(append([]string{}, astridPrompt...), "--no-daemon"),
		env: []string{"ASTRID_HOME=" + homeDir(dir, "astrid-inproc"), "OPENAI_BASE_URL=" + v1, "OPENAI_API_KEY=" + key}}
	daemonEnv := []string{"ASTRID_HOME=" + homeDir(dir, "astrid-daemon"), "OPENAI_BASE_URL=" + v1, "OPENAI_API_KEY=" + key}
	daemon := &agent{name: "astrid daemon", binName: "astrid", bin: astridBin, args: astridPrompt, env: daemonEnv}
	daemon.setup = func() error {
		cmd := exec.Command(astridBin, "start", "--workspace", ws)
		cmd.Dir, cmd.Env = ws, append(os.Environ(), daemonEnv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("astrid start: %v: %s", err, out)
		}
		return nil
	}
	daemon.teardown = func() error {
		cmd := exec.Command(astridBin, "stop")
		cmd.Env = append(os.Environ(), daemonEnv...)
		return cmd.Run()
	}
	agents = append(agents, inproc, daemon)

	codexHome := homeDir(dir, "codex")
	codex := &agent{name: "codex", binName: "codex", bin: lookPath("codex"),
		args: []string{"exec", "--skip-git-repo-check", "--color", "never", prompt},
		env:  append(isolated(codexHome), "CODEX_HOME="+codexHome, "OPENAI_API_KEY="+key)}
	codex.setup = func() error {
		return write(filepath.Join(codexHome, "config.toml"), `model = "fake-model"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.fake]
name = "fake"
base_url = "`+v1+`"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
`)
	}

	claudeHome := homeDir(dir, "claude")
	claude := &agent{name: "claude", binName: "claude", bin: lookPath("claude"),
		args: []string{"-p", prompt, "--model", "fake-model", "--allowedTools", "Read", "--output-format", "text"},
		env: append(isolated(claudeHome), "CLAUDE_CONFIG_DIR="+filepath.Join(claudeHome, ".claude"), "ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY="+key,
			"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")}

	opencodeHome := homeDir(dir, "opencode")
	opencodeConfig := filepath.Join(opencodeHome, "opencode.json")
	opencode := &agent{name: "opencode", binName: "opencode", bin: lookPath("opencode"),
		args: []string{"run", "-m", "fake/fake-model", prompt},
		env:  append(isolated(opencodeHome), "OPENCODE_CONFIG="+opencodeConfig, "OPENCODE_DISABLE_AUTOUPDATE=1")}
	opencode.setup = func() error {
		return write(opencodeConfig, `{"$schema":"https://opencode.ai/config.json","autoupdate":false,"share":"disabled","permission":{"external_directory":"allow"},
 "provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"fake","options":{"baseURL":"`+v1+`","apiKey":"`+key+`"},"models":{"fake-model":{"name":"fake-model"}}}},
 "model":"fake/fake-model"}`)
	}

	crushHome := homeDir(dir, "crush")
	crush := &agent{name: "crush", binName: "crush", bin: lookPath("crush"),
		args: []string{"run", "--yolo", prompt},
		env:  append(isolated(crushHome), "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1", "CRUSH_DISABLE_METRICS=1")}
	crush.setup = func() error {
		return write(filepath.Join(crushHome, ".config", "crush", "crush.json"), `{"providers":{"fake":{"type":"openai","base_url":"`+v1+`","api_key":"`+key+`",
 "models":[{"id":"fake-model","name":"fake-model","context_window":128000,"default_max_tokens":1000}]}},
 "models":{"large":{"model":"fake-model","provider":"fake"},"small":{"model":"fake-model","provider":"fake"}},
 "options":{"disable_provider_auto_update":true}}`)
	}

	gooseHome := homeDir(dir, "goose")
	goose := &agent{name: "goose", binName: "goose", bin: lookPath("goose"),
		args: []string{"run", "--no-session", "-t", prompt},
		env:  append(isolated(gooseHome), "GOOSE_PROVIDER=openai", "GOOSE_MODEL=fake-model", "OPENAI_HOST="+url, "OPENAI_API_KEY="+key, "GOOSE_MODE=auto")}

	return append(agents, codex, claude, opencode, crush, goose)
}
