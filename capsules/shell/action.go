package shell

import (
	"path"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// The approval question's action (spec/capsules-cli.md §5.3): the program
// and its subcommands for tools known to have them ("git push", "docker
// compose up"), stopping at the first option; the whole command for any
// other program. It is the question's headline only: the host keys an
// allowance on the action and the resource together, and the resource is
// the exact command, so "always" covers that command and no other.

// subcommandDepth is how many words name the action of a known tool.
var subcommandDepth = map[string]int{}

func init() {
	for _, p := range strings.Fields("git docker kubectl cargo npm npx yarn pnpm pip pip3 poetry apt apt-get brew dnf yum pacman snap flatpak helm terraform ansible vagrant make cmake go rustup bun deno uv nix podman gh fly flyctl stripe supabase vercel wrangler firebase") {
		subcommandDepth[p] = 2
	}
}

// deeper are the program and subcommand pairs whose action keeps a third word.
var deeper = map[string]bool{
	"docker compose": true, "aws s3": true, "gcloud s3": true, "kubectl config": true, "git remote": true,
	"npm run": true, "yarn run": true, "pnpm run": true, "bun run": true, "deno run": true,
}

// actionOf is the approval action of command, at most
// ipc.MaxApprovalAction bytes.
func actionOf(command string) string {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return ""
	}
	prog := path.Base(fields[0])
	depth := subcommandDepth[prog]
	if len(fields) > 1 && deeper[prog+" "+fields[1]] {
		depth = 3
	}
	action := strings.Join(fields, " ")
	if depth > 0 {
		keep := []string{prog}
		for _, f := range fields[1:] {
			if len(keep) == depth || strings.HasPrefix(f, "-") {
				break
			}
			keep = append(keep, f)
		}
		action = strings.Join(keep, " ")
	}
	if len(action) > ipc.MaxApprovalAction {
		// The resource still holds the whole command.
		action = ipc.CutVisibly(action, ipc.MaxApprovalAction-48)
	}
	return action
}
