package react

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// registryWait bounds the round trip to the provider registry: its
// describe fan-out may take its whole window (500 ms) when a provider is
// silent, and a loaded machine must not turn that into a fallback.
const registryWait = hostapi.MaxRecvTimeout / 12

// registryReplyPrefix + correlation id is the registry's scoped answer.
var registryReplyPrefix = ipc.RegistryResponseTopic(ipc.RegistryOpGetActiveModel, "")

// chooseModel sets t's provider and model (docs/agent.md, "Which provider
// and model"): the prompt's context wins; without a provider there, the
// principal's choice in the registry, else the operator's [env] provider,
// else the registry's default, else DefaultProvider. A model in the
// context applies to whichever provider is chosen.
func chooseModel(c *sdk.Call, t *turn, pc ipc.PromptContext) {
	envModel := func() string {
		if pc.Model != "" {
			return pc.Model
		}
		return configText(c, "model", "")
	}
	if pc.Provider != "" {
		t.Provider, t.Model = pc.Provider, envModel()
		setBudget(c, t, 0)
		return
	}
	active, err := activeModel(c)
	if err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: the provider registry did not say which model to use (%v); using [env] provider and model", t.SessionID, err))
	}
	operatorChose := configText(c, "provider", "") != ""
	switch {
	case active.ActiveModel != nil && (active.Chosen || !operatorChose):
		t.Provider, t.Model = active.ActiveModel.Provider, active.ActiveModel.Model
		t.Defaulted = !active.Chosen
		window := active.ActiveModel.ContextWindow
		if pc.Model != "" && pc.Model != t.Model {
			t.Model, window = pc.Model, 0 // another model's window is not known here
		}
		setBudget(c, t, window)
	default:
		t.Provider, t.Model = configText(c, "provider", DefaultProvider), envModel()
		t.Defaulted = !operatorChose
		setBudget(c, t, 0)
	}
}

// activeModel asks the provider registry for the invoking principal's
// active model. No registry loaded is not an error: the answer is empty.
func activeModel(c *sdk.Call) (ipc.RegistryReply, error) {
	var reply ipc.RegistryReply
	registries, err := c.Interceptors(ipc.RegistryGetActiveModelTopic)
	if err != nil || len(registries) == 0 {
		return reply, err
	}
	corr := newID(c, "model")
	req, err := json.Marshal(ipc.RegistryRequest{CorrelationID: corr})
	if err != nil {
		return reply, err
	}
	payload, err := roundTrip(c, ipc.RegistryGetActiveModelTopic, registryReplyPrefix+corr, corr, req, registries, registryWait, "registry")
	if err != nil {
		return reply, err
	}
	if err := json.Unmarshal(payload, &reply); err != nil {
		return ipc.RegistryReply{}, fmt.Errorf("the registry's answer does not decode: %w", err)
	}
	if reply.Error != "" {
		return ipc.RegistryReply{}, errors.New(reply.Error)
	}
	if e := reply.ActiveModel; e != nil && (!validID(e.Provider) || e.Model == "") {
		return ipc.RegistryReply{}, fmt.Errorf("the registry named an invalid model %q", e.ID)
	}
	return reply, nil
}
