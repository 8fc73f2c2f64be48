package commandclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/request"
	"github.com/astrid-go/astrid/ipc"
)

// ClientID is the identity commands are gathered under.
const ClientID = "astrid-commands"

// The static engine's commands topics (docs/static.md).
const (
	requestTopic   = "static.v1.request.commands"
	responsePrefix = "static.v1.response.commands."
)

// ACL lets the client ask for the commands and hear the answers, and
// nothing else.
func ACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{ID: ClientID, Publish: []string{requestTopic}, Subscribe: []string{responsePrefix + "*"}}
}

// Kernel is the part of the kernel a frontend reaches.
type Kernel interface {
	Publish(from dispatch.Caller, topic string, payload json.RawMessage) (dispatch.Result, error)
	Subscribe(from dispatch.Caller, pattern string, scoped bool) (bus.Subscription, error)
	Interceptors(topic string) []string
}

// Command is one capsule command as a frontend offers it.
type Command struct {
	// Name is what follows the '/': the command's own name, or
	// "<capsule>:<name>" when that would shadow a built-in or an earlier
	// capsule's command (Renamed then says why).
	Name        string `json:"name"`
	Capsule     string `json:"capsule"`
	Description string `json:"description,omitempty"`
	// Prompt is the declarative command file's prompt ("" when the
	// command names none: it cannot be run from here).
	Prompt  string `json:"prompt,omitempty"`
	Renamed string `json:"renamed,omitempty"`
}

// answer is static.v1.response.commands.<id>'s payload.
type answer struct {
	Capsule   string `json:"capsule"`
	RequestID string `json:"request_id"`
	Commands  []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Kind        string          `json:"kind"`
		Definition  json.RawMessage `json:"definition"`
	} `json:"commands"`
}

// List gathers the slash commands of every capsule that serves commands,
// for principal, in dispatch order, until each has answered or ctx ends
// (a capsule silent by then is left out and named in the error only when
// none answered). reserved are the frontend's built-in names (without
// '/'): a command of such a name is offered as "<capsule>:<name>".
func List(ctx context.Context, k Kernel, principal string, reserved []string) ([]Command, error) {
	servers := distinct(k.Interceptors(requestTopic))
	if len(servers) == 0 {
		return nil, nil
	}
	caller := dispatch.Caller{Capsule: ClientID, Principal: principal}
	sub, err := k.Subscribe(caller, responsePrefix+"*", true)
	if err != nil {
		return nil, fmt.Errorf("commands: %w", err)
	}
	defer sub.Close()
	id := request.NewID("cmd-")
	body, err := json.Marshal(map[string]string{"request_id": id})
	if err == nil {
		_, err = k.Publish(caller, requestTopic, body)
	}
	if err != nil {
		return nil, fmt.Errorf("commands: ask %s: %w", requestTopic, err)
	}
	answers := map[string]answer{}
	for len(answers) < len(servers) {
		d, err := sub.Recv(ctx)
		if err != nil {
			if len(answers) == 0 {
				return nil, fmt.Errorf("commands: no capsule answered %s: %w", requestTopic, err)
			}
			break
		}
		src := d.Envelope.SourceID
		if !slices.Contains(servers, src) || d.Envelope.Topic != responsePrefix+src {
			continue // only a capsule's own answer topic counts
		}
		var a answer
		if json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &a) != nil || a.RequestID != id {
			continue
		}
		answers[src] = a
	}
	var out []Command
	taken := map[string]bool{}
	for _, r := range reserved {
		taken[r] = true
	}
	for _, src := range servers {
		a, ok := answers[src]
		if !ok {
			continue
		}
		for _, c := range a.Commands {
			if c.Kind != "" && c.Kind != "slash" {
				continue
			}
			cmd := Command{Name: c.Name, Capsule: src, Description: c.Description, Prompt: promptOf(c.Definition)}
			if taken[cmd.Name] {
				why := fmt.Sprintf("/%s is taken by %s", cmd.Name, takenBy(cmd.Name, reserved, out))
				cmd.Name = src + ":" + c.Name
				cmd.Renamed = why
				if taken[cmd.Name] {
					continue // the same capsule twice: the first stands
				}
			}
			taken[cmd.Name] = true
			out = append(out, cmd)
		}
	}
	return out, nil
}

func takenBy(name string, reserved []string, earlier []Command) string {
	if slices.Contains(reserved, name) {
		return "a built-in command"
	}
	for _, c := range earlier {
		if c.Name == name {
			return c.Capsule
		}
	}
	return "another command"
}

// promptOf reads a declarative command file's prompt.
func promptOf(def json.RawMessage) string {
	var d struct {
		Prompt string `json:"prompt"`
	}
	if len(def) == 0 || json.Unmarshal(def, &d) != nil {
		return ""
	}
	return d.Prompt
}

func distinct(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// Find returns the command named name (without '/').
func Find(cmds []Command, name string) (Command, bool) {
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// ErrNoPrompt is returned by Expand for a command whose capsule gave no
// prompt.
var ErrNoPrompt = errors.New("the command has no prompt to send (its [[command]] names no file with a prompt)")

// maxExpansion bounds an expanded prompt.
const maxExpansion = 256 << 10

// Expand is the prompt `/name args` sends: the command's prompt with
// {{args}} and $ARGUMENTS replaced by args, and $1 to $9 by its
// whitespace-separated words (missing ones empty); a prompt with none of
// them gets args on a line of its own after it, when there are any.
func (c Command) Expand(args string) (string, error) {
	if strings.TrimSpace(c.Prompt) == "" {
		return "", fmt.Errorf("/%s: %w", c.Name, ErrNoPrompt)
	}
	args = strings.TrimSpace(args)
	words := strings.Fields(args)
	p := c.Prompt
	placed := false
	for _, ph := range []string{"{{args}}", "$ARGUMENTS"} {
		if strings.Contains(p, ph) {
			p, placed = strings.ReplaceAll(p, ph, args), true
		}
	}
	for i := 9; i >= 1; i-- {
		ph := fmt.Sprintf("$%d", i)
		if strings.Contains(p, ph) {
			w := ""
			if i <= len(words) {
				w = words[i-1]
			}
			p, placed = strings.ReplaceAll(p, ph, w), true
		}
	}
	if !placed && args != "" {
		p += "\n\n" + args
	}
	if len(p) > maxExpansion {
		return "", fmt.Errorf("/%s: the expanded prompt is %d bytes, more than %d", c.Name, len(p), maxExpansion)
	}
	return p, nil
}
