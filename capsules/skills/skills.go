package skills

import (
	_ "embed"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the skill library's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// CapsuleID is the skill library's id.
const CapsuleID = "astrid-capsule-skills"

// The topics it uses.
const (
	beforeBuildTopic      = "prompt_builder.v1.hook.before_build"
	hookResponsePrefix    = "prompt_builder.v1.hook_response."
	staticSkillsRequest   = "static.v1.request.skills"
	staticSkillsResponses = "static.v1.response.skills."
)

// New returns the skill library's code.
func New() *sdk.Capsule {
	c := sdk.New("Offers the installed skills to the model: an index in the prompt, the text through read_skill")
	c.Handle(beforeBuildTopic, "handle_before_build", handleBeforeBuild)
	c.Handle(ipc.CapsulesLoadedTopic, "handle_capsules_loaded", handleCapsulesLoaded)
	sdk.Tool(c, "read_skill", "Read the full instructions of a skill named in the skill list of your instructions. Call it before doing a task a skill covers, and follow what it says.", readSkill)
	c.Subscribes(staticSkillsResponses + "*")
	c.Publishes(hookResponsePrefix + "*")
	c.Publishes(staticSkillsRequest)
	return c
}
