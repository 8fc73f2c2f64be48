package sdktest

import (
	"github.com/astrid-go/astrid/internal/dispatch"
)

// promptClientID is the frontend identity PromptPublish and PromptListen
// use, as an orchestrator talking to the prompt builder would.
const promptClientID = "sdktest-prompt-client"

// promptClientACL lets the test frontend ask the prompt builder and hear
// its answers and its after_build notices, and nothing else.
func promptClientACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{
		ID:        promptClientID,
		Publish:   []string{"prompt_builder.v1.assemble"},
		Subscribe: []string{"prompt_builder.v1.response.*", "prompt_builder.v1.hook.after_build"},
	}
}

// PromptListen subscribes principal to pattern (say
// prompt_builder.v1.response.assemble) as the prompt builder's client; the
// route is closed when the test ends.
func (k *Kernel) PromptListen(principal, pattern string) *Replies {
	k.t.Helper()
	caller := dispatch.Caller{Capsule: promptClientID, Principal: principal}
	sub, err := k.k.Dispatcher.Subscribe(caller, pattern, true)
	if err != nil {
		k.t.Fatalf("sdktest: subscribe %s: %v", pattern, err)
	}
	k.t.Cleanup(sub.Close)
	return &Replies{k: k, sub: sub}
}

// PromptPublish publishes payload (marshalled to JSON; a json.RawMessage
// or string is used as is) on prompt_builder.v1.assemble for principal,
// failing the test if no capsule handles it.
func (k *Kernel) PromptPublish(principal string, payload any) {
	k.t.Helper()
	if _, err := k.publishAs(promptClientID, principal, "prompt_builder.v1.assemble", payload); err != nil {
		k.t.Fatalf("sdktest: publish prompt_builder.v1.assemble: %v", err)
	}
}
