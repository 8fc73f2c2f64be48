package skills_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/skills"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// describer100 answers describe with n tools, each with a one-field
// schema.
func describer(id string, n int) sdktest.Capsule {
	toml := fmt.Sprintf("[package]\nname = %q\nversion = \"0.1.0\"\nastrid-version = \"^0.1\"\n\n[subscribe]\n\"tool.v1.request.describe\" = { wit = \"opaque\", handler = \"describe_many\" }\n\n[publish]\n\"tool.v1.response.describe.%s\" = \"opaque\"\n", id, id)
	return sdktest.Capsule{Manifest: []byte(toml), New: func() *sdk.Capsule {
		c := sdk.New("describes many tools")
		c.Handle(ipc.ToolRequestDescribeTopic, "describe_many", func(call *sdk.Call) error {
			var resp ipc.ToolDescribeResponse
			for i := range n {
				resp.Tools = append(resp.Tools, ipc.ToolDescriptor{Name: fmt.Sprintf("tool_%03d", i),
					Description: "Does thing number " + fmt.Sprint(i) + " to the workspace, carefully.",
					InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string","description":"a path"}},"required":["path"]}`)})
			}
			return call.PublishJSON(ipc.ToolDescribeResponseTopic(id), resp)
		})
		c.Publishes(ipc.ToolDescribeResponseTopic(id))
		return c
	}}
}

// The prompt builder's cost per turn with 50 skills (a capsule's
// [[skill]] entries, 2 KiB of instructions each) and 100 tools described:
// one assemble request to its answer, the skill index made through the
// skills capsule's before_build hook, the tool catalogue from the
// builder's cache as on every turn but the first. Goal: ≤ 2 ms.
func BenchmarkAssembleWith50SkillsAnd100Tools(b *testing.B) {
	b.Run("skills", func(b *testing.B) { benchAssemble(b, true) })
	// The same prompt builder and tools without the skills capsule: what
	// the skills add is the difference.
	b.Run("no-skills", func(b *testing.B) { benchAssemble(b, false) })
}

func benchAssemble(b *testing.B, withSkills bool) {
	texts := map[string]string{}
	for i := range 50 {
		texts[fmt.Sprintf("skill-%02d", i)] = fmt.Sprintf("---\nname: skill-%02d\ndescription: How to do task %d the way this team does it\n---\n%s", i, i, strings.Repeat("Step. ", 340))
	}
	// The publish rate is raised past what 1000 assembled prompts a
	// second need, so that the figure is the work, not the rate limit.
	caps := []sdktest.Capsule{{Manifest: promptbuilder.Manifest, New: promptbuilder.New}, describer("many-tools", 100)}
	want := 0
	if withSkills {
		caps = append(caps, sdktest.Capsule{Manifest: skills.Manifest, New: skills.New}, skillCapsule("team-skills", true, texts))
		want = 50
	}
	k := sdktest.NewWithPublishRate(b, 1<<30, 64<<20, caps...)
	replies := k.PromptListen(ipc.DefaultPrincipal, promptbuilder.ResponseTopic)
	k.PromptPublish(ipc.DefaultPrincipal, map[string]any{"request_id": "warm", "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "hi")}})
	_, body := replies.Next()
	var first promptbuilder.Response
	if err := json.Unmarshal(body, &first); err != nil {
		b.Fatal(err)
	}
	if n := strings.Count(first.SystemPrompt, "(from team-skills)"); n != want || len(first.Tools) < 100 {
		b.Fatalf("%d skills indexed, %d tools", n, len(first.Tools))
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("b%d", i)
		k.PromptPublish(ipc.DefaultPrincipal, map[string]any{"request_id": id, "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "hi")}})
		_, body := replies.Next()
		if !strings.Contains(string(body[:min(len(body), 200)]), `"request_id":"`+id+`"`) || strings.Contains(string(body[:min(len(body), 300)]), `"error"`) {
			b.Fatalf("reply to %s: %.300s", id, body)
		}
	}
}
