package main

import (
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The conformance fixture's resources and prompts (the server suite's
// resources-* , prompts-* and completion-complete scenarios), served
// through the resource and prompt conventions (ipc/resource.go,
// ipc/prompt.go) as any capsule serves them.

const fixtureID = "mcp-fixture"

// fixtureResourceSubscribe and fixtureResourcePublish are the fixture
// manifest's [subscribe] and [publish] lines for them.
var (
	fixtureResourceSubscribe = fmt.Sprintf(`%q = { wit = "opaque", handler = "resource_describe" }
%q = { wit = "opaque", handler = "resource_read" }
%q = { wit = "opaque", handler = "prompt_describe" }
%q = { wit = "opaque", handler = "prompt_get" }
`, ipc.ResourceRequestDescribeTopic, ipc.ResourceReadTopic(fixtureID), ipc.PromptRequestDescribeTopic, ipc.PromptGetTopic(fixtureID))
	fixtureResourcePublish = fmt.Sprintf("%q = \"opaque\"\n%q = \"opaque\"\n%q = \"opaque\"\n%q = \"opaque\"\n%q = \"opaque\"\n",
		ipc.ResourceDescribeResponseTopic(fixtureID), ipc.ResourceReadResultTopic, ipc.ResourceUpdatedTopic(fixtureID), ipc.PromptDescribeResponseTopic(fixtureID), ipc.PromptGetResultTopic)
)

// serveFixtureResourcesAndPrompts serves the fixture's resources and
// prompts on c with the sdk's Resources and Prompts.
func serveFixtureResourcesAndPrompts(c *sdk.Capsule) {
	sdk.Resources(c, func(*sdk.Call) (ipc.ResourceDescribeResponse, error) {
		return ipc.ResourceDescribeResponse{
			Resources: []ipc.ResourceDescriptor{
				{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MimeType: "text/plain"},
				{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (a PNG)", MimeType: "image/png"},
				{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource to subscribe to", MimeType: "text/plain"},
			},
			Templates: []ipc.ResourceTemplateDescriptor{{
				URITemplate: "test://template/{id}/data", Name: "template-data", Description: "Data for an id", MimeType: "application/json",
				Values: map[string][]string{"id": {"123", "456"}},
			}},
		}, nil
	}, func(_ *sdk.Call, uri string) (ipc.ResourceReadResult, error) {
		text := func(mime, s string) ipc.ResourceReadResult {
			return ipc.ResourceReadResult{Contents: []ipc.ResourceContents{{URI: uri, MimeType: mime, Text: s}}}
		}
		id, isTemplate := strings.CutPrefix(uri, "test://template/")
		id, isData := strings.CutSuffix(id, "/data")
		switch {
		case uri == "test://static-text":
			return text("text/plain", "This is the content of the static text resource."), nil
		case uri == "test://static-binary":
			return ipc.ResourceReadResult{Contents: []ipc.ResourceContents{{URI: uri, MimeType: "image/png", Blob: fixturePNG}}}, nil
		case uri == "test://watched-resource":
			return text("text/plain", "Watched resource content"), nil
		case isTemplate && isData && id != "" && !strings.Contains(id, "/"):
			return text("application/json", fmt.Sprintf(`{"id":%q,"templateTest":true,"data":"Data for ID: %s"}`, id, id)), nil
		}
		return ipc.ResourceReadResult{NotFound: true}, nil
	})
	sdk.Prompts(c, func(*sdk.Call) (ipc.PromptDescribeResponse, error) {
		return ipc.PromptDescribeResponse{Prompts: []ipc.PromptDescriptor{
			{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
			{Name: "test_prompt_with_arguments", Description: "A prompt with arguments", Arguments: []ipc.PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true, Values: []string{"testValue1", "test-alpha", "other"}},
				{Name: "arg2", Description: "Second test argument", Required: true},
			}},
			{Name: "test_prompt_with_embedded_resource", Description: "A prompt with an embedded resource", Arguments: []ipc.PromptArgument{
				{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
			}},
			{Name: "test_prompt_with_image", Description: "A prompt with an image"},
		}}, nil
	}, func(_ *sdk.Call, req ipc.PromptGetRequest) (ipc.PromptGetResult, error) {
		user := func(content ...ipc.PromptContent) ipc.PromptGetResult {
			var res ipc.PromptGetResult
			for _, c := range content {
				res.Messages = append(res.Messages, ipc.PromptMessage{Role: "user", Content: c})
			}
			return res
		}
		textOf := func(s string) ipc.PromptContent { return ipc.PromptContent{Type: ipc.PromptContentText, Text: s} }
		switch req.Name {
		case "test_simple_prompt":
			return user(textOf("This is a simple prompt for testing.")), nil
		case "test_prompt_with_arguments":
			return user(textOf(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"]))), nil
		case "test_prompt_with_embedded_resource":
			return user(
				ipc.PromptContent{Type: ipc.PromptContentResource, Resource: &ipc.ResourceContents{URI: req.Arguments["resourceUri"], MimeType: "text/plain", Text: "Embedded resource content for testing."}},
				textOf("Please process the embedded resource above.")), nil
		case "test_prompt_with_image":
			return user(
				ipc.PromptContent{Type: ipc.PromptContentImage, Data: fixturePNG, MimeType: "image/png"},
				textOf("Please analyze the image above.")), nil
		}
		return ipc.PromptGetResult{NotFound: true}, nil
	})
}
