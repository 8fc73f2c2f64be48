package commandclient_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/commandclient"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// commandCapsule is a static-only capsule declaring slash commands:
// name → the prompt of its command file ("" for a command without one).
func commandCapsule(id string, prompts map[string]string, order ...string) sdktest.Capsule {
	var b strings.Builder
	fmt.Fprintf(&b, "[package]\nname = %q\nversion = \"0.1.0\"\nastrid-version = \"^0.1\"\n", id)
	files := map[string]string{}
	for _, name := range order {
		fmt.Fprintf(&b, "\n[[command]]\nname = %q\ndescription = \"the %s command\"\n", name, name)
		if p := prompts[name]; p != "" {
			fmt.Fprintf(&b, "file = \"commands/%s.toml\"\n", name)
			files["commands/"+name+".toml"] = fmt.Sprintf("prompt = %q\n", p)
		}
	}
	return sdktest.Capsule{Manifest: []byte(b.String()), Files: files}
}

func list(t *testing.T, k *sdktest.Kernel, reserved ...string) []commandclient.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmds, err := commandclient.List(ctx, k.Agent(), "default", reserved)
	if err != nil {
		t.Fatal(err)
	}
	return cmds
}

// Commands of every capsule are gathered with their prompts; a name that
// shadows a built-in or an earlier capsule's command is offered as
// <capsule>:<name>, saying why.
func TestListNamesAndShadowing(t *testing.T) {
	k := sdktest.New(t,
		commandCapsule("deployer", map[string]string{"deploy": "Deploy {{args}} to production.", "help": "Explain the deploy process."}, "deploy", "help", "status"),
		commandCapsule("other", map[string]string{"deploy": "Deploy differently."}, "deploy"))
	got := map[string]commandclient.Command{}
	for _, c := range list(t, k, "help", "clear") {
		got[c.Name] = c
	}
	if c := got["deploy"]; c.Capsule != "deployer" || c.Prompt != "Deploy {{args}} to production." || c.Renamed != "" || c.Description != "the deploy command" {
		t.Fatalf("deploy: %+v (all %+v)", c, got)
	}
	if c := got["deployer:help"]; c.Prompt != "Explain the deploy process." || !strings.Contains(c.Renamed, "/help is taken by a built-in command") {
		t.Fatalf("the built-in-shadowing help: %+v (all %+v)", c, got)
	}
	if _, ok := got["help"]; ok {
		t.Fatal("a capsule's /help shadows the built-in")
	}
	if c := got["other:deploy"]; c.Prompt != "Deploy differently." || !strings.Contains(c.Renamed, "taken by deployer") {
		t.Fatalf("the second deploy: %+v", c)
	}
	if c, ok := got["status"]; !ok || c.Prompt != "" {
		t.Fatalf("status: %+v", c)
	}
	if len(got) != 4 {
		t.Fatalf("commands %+v", got)
	}
}

func TestNoCommandCapsules(t *testing.T) {
	if cmds := list(t, sdktest.New(t)); len(cmds) != 0 {
		t.Fatalf("%+v", cmds)
	}
}

func TestExpand(t *testing.T) {
	for _, tc := range []struct {
		prompt, args, want string
		err                error
	}{
		{"Deploy {{args}} now.", " staging  eu ", "Deploy staging  eu now.", nil},
		{"Fix issue $ARGUMENTS.", "42", "Fix issue 42.", nil},
		{"Compare $1 with $2 ($3).", "a b", "Compare a with b ().", nil},
		{"Summarize the repo.", "", "Summarize the repo.", nil},
		{"Summarize the repo.", "briefly", "Summarize the repo.\n\nbriefly", nil},
		{"", "x", "", commandclient.ErrNoPrompt},
	} {
		got, err := commandclient.Command{Name: "c", Prompt: tc.prompt}.Expand(tc.args)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("Expand(%q, %q) = %q, %v; want %q, %v", tc.prompt, tc.args, got, err, tc.want, tc.err)
		}
	}
}
