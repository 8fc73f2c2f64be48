package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// sessionNamedLine is the line -p ends with on stderr, naming its session.
var sessionNamedLine = regexp.MustCompile(`session (s-[0-9a-f]{32}) \(continue with --session s-[0-9a-f]{32}\)`)

// sessionNamed returns the session a -p run named on stderr.
func sessionNamed(t *testing.T, stderr string) string {
	t.Helper()
	m := sessionNamedLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no session named on stderr:\n%s", stderr)
	}
	return m[1]
}

// markScript answers a prompt holding the piped marker one way and any
// other prompt another.
const markScript = `{"match": {"user": "PIPED-MARK"}}
{"TextDelta": "The pipe arrived."}
"Done"
{"match": {"user": ""}}
{"TextDelta": "Four."}
"Done"
`

// No silent substitutes (issue 29.4), in-process and through a daemon:
// with no provider configured the replay script's answer is followed by a
// plain notice that no model answered and how to configure one (exit 0
// stays); --provider replay asks for the script and gets no notice; an
// unknown --session is a usage error, not a new session; what is piped on
// standard input with -p "text" is appended to the prompt; usage errors
// exit 2.
func TestNoSilentSubstitutes(t *testing.T) {
	ws := promptHome(t, markScript)
	home := os.Getenv("ASTRID_HOME")
	for _, key := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"} {
		t.Setenv(key, "")
	}
	run := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		cmd := astridProcess(home, append(args, "--workspace", ws)...)
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin) // a pipe
		}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), exitStatus(t, err)
	}
	const notice = "no model is configured, so the offline replay script answered, not a model"
	check := func(how string) {
		t.Helper()
		out, errOut, code := run("", "-p", "What is 2+2?")
		if code != 0 || out != "Four.\n" || !strings.Contains(errOut, notice) || !strings.Contains(errOut, "ANTHROPIC_API_KEY") {
			t.Fatalf("%s: no provider: exit %d, stdout %q, stderr:\n%s", how, code, out, errOut)
		}
		session := sessionNamed(t, errOut)
		out, errOut, code = run("", "-p", "What is 2+2?", "--provider", "replay", "--session", session)
		if code != 0 || out != "Four.\n" || strings.Contains(errOut, notice) {
			t.Fatalf("%s: --provider replay: exit %d, stdout %q, stderr:\n%s", how, code, out, errOut)
		}
		out, errOut, code = run("", "-p", "hello", "--session", "s-0123456789abcdef0123456789abcdef")
		if code != 2 || out != "" || !strings.Contains(errOut, "no such session") {
			t.Fatalf("%s: unknown --session: exit %d, stdout %q, stderr:\n%s", how, code, out, errOut)
		}
		out, errOut, code = run("PIPED-MARK\n", "-p", "review this", "--provider", "replay")
		if code != 0 || out != "The pipe arrived.\n" {
			t.Fatalf("%s: -p text with a pipe: exit %d, stdout %q, stderr:\n%s", how, code, out, errOut)
		}
		shown, _, _ := run("", "session", "show", sessionNamed(t, errOut))
		if !strings.Contains(shown, "review this") || !strings.Contains(shown, "PIPED-MARK") {
			t.Fatalf("%s: the session does not hold the text and the pipe:\n%s", how, shown)
		}
		for _, args := range [][]string{{"--bogus"}, {"-p"}, {"bogus"}, {"capsule", "bogus"}, {"tool", "call"}, {"-p", "x", "--timeout", "soon"}} {
			if _, errOut, code := run("", args...); code != 2 || !strings.Contains(errOut, "astrid: ") {
				t.Fatalf("%s: %v: exit %d, stderr:\n%s", how, args, code, errOut)
			}
		}
	}
	check("in-process")
	startedPid(t, home, ws)
	t.Cleanup(func() { runProcess(t, home, "stop") })
	check("through the daemon")
}
