package registry

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the provider registry's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// New returns the provider registry's code.
func New() *sdk.Capsule {
	c := sdk.New("Finds the loaded LLM providers' models and keeps each principal's active one")
	c.Handle(ipc.RegistryGetProvidersTopic, "handle_get_providers", handleGetProviders)
	c.Handle(ipc.RegistryGetActiveModelTopic, "handle_get_active_model", handleGetActiveModel)
	c.Handle(ipc.RegistrySetActiveModelTopic, "handle_set_active_model", handleSetActiveModel)
	c.Handle(ipc.RegistryUnsetActiveModelTopic, "handle_unset_active_model", handleUnsetActiveModel)
	c.Handle(ipc.CapsulesLoadedTopic, "handle_capsules_loaded", handleCapsulesLoaded)
	c.Subscribes(ipc.LLMResponseDescribeTopic)
	c.Publishes(ipc.LLMRequestDescribeTopic)
	c.Publishes(ipc.RegistryResponsePattern)
	c.Publishes(ipc.RegistryActiveModelChangedTopic)
	return c
}

// request reads a request and registers the failure reply, so the
// requester hears back even if this call traps or times out. ok is false
// when the request is done with: it had nowhere to be answered (logged),
// or it did not decode (the error was answered; err is that publish's
// failure).
func request(c *sdk.Call, op string) (req ipc.RegistryRequest, topic string, ok bool, err error) {
	derr := json.Unmarshal(c.Payload(), &req)
	if derr != nil {
		// The correlation id may still be readable when another field is
		// of the wrong type.
		var id struct {
			CorrelationID string `json:"correlation_id"`
		}
		_ = json.Unmarshal(c.Payload(), &id)
		req = ipc.RegistryRequest{CorrelationID: id.CorrelationID}
	}
	if req.CorrelationID == "" || strings.Contains(req.CorrelationID, ".") {
		c.Log(hostapi.LogWarn, fmt.Sprintf("registry: dropped a %s request: correlation_id %q is missing or has a '.', so no reply topic exists", op, req.CorrelationID))
		return req, "", false, nil
	}
	topic = ipc.RegistryResponseTopic(op, req.CorrelationID)
	if verr := ipc.ValidateTopic(topic); verr != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("registry: dropped a %s request: correlation_id %q cannot name a reply topic: %v", op, req.CorrelationID, verr))
		return req, "", false, nil
	}
	if b, merr := json.Marshal(ipc.RegistryReply{CorrelationID: req.CorrelationID, Error: "registry: the " + op + " request did not finish"}); merr == nil {
		if ferr := c.SetFailureReply(topic, b); ferr != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("registry: %s %q: failure reply not registered: %v", op, req.CorrelationID, ferr))
		}
	}
	if derr != nil {
		return req, topic, false, fail(c, topic, req.CorrelationID, fmt.Sprintf("registry: %s request does not decode: %v", op, derr))
	}
	return req, topic, true, nil
}

// fail answers a request with an error and logs it.
func fail(c *sdk.Call, topic, correlationID, msg string) error {
	c.Log(hostapi.LogWarn, msg)
	return c.PublishJSON(topic, ipc.RegistryReply{CorrelationID: correlationID, Error: msg})
}

func handleGetProviders(c *sdk.Call) error {
	req, topic, ok, err := request(c, ipc.RegistryOpGetProviders)
	if !ok {
		return err
	}
	found, err := discover(c, true)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "registry: get_providers: "+err.Error())
	}
	reply := resolve(c, found.Entries)
	reply.CorrelationID = req.CorrelationID
	reply.Providers = found.Entries
	if reply.Providers == nil {
		reply.Providers = []ipc.ModelEntry{}
	}
	reply.Missing = found.Missing
	return c.PublishJSON(topic, reply)
}

func handleGetActiveModel(c *sdk.Call) error {
	req, topic, ok, err := request(c, ipc.RegistryOpGetActiveModel)
	if !ok {
		return err
	}
	entries, err := models(c)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "registry: get_active_model: "+err.Error())
	}
	reply := resolve(c, entries)
	reply.CorrelationID = req.CorrelationID
	return c.PublishJSON(topic, reply)
}

func handleSetActiveModel(c *sdk.Call) error {
	req, topic, ok, err := request(c, ipc.RegistryOpSetActiveModel)
	if !ok {
		return err
	}
	// A fresh discovery: a provider loaded a moment ago, or a model its
	// server began to serve, must be choosable.
	found, err := discover(c, true)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "registry: set_active_model: "+err.Error())
	}
	entry, ok := lookup(found.Entries, req.ModelID)
	if !ok {
		return fail(c, topic, req.CorrelationID, unknownModel(req.ModelID, found))
	}
	if err := c.KVSet(keyActive, []byte(entry.ID)); err != nil {
		return fail(c, topic, req.CorrelationID, fmt.Sprintf("registry: set_active_model: the choice was not kept: %v", err))
	}
	if err := c.PublishJSON(ipc.RegistryActiveModelChangedTopic, entry); err != nil {
		c.Log(hostapi.LogWarn, "registry: active_model_changed not published: "+err.Error())
	}
	return c.PublishJSON(topic, ipc.RegistryReply{CorrelationID: req.CorrelationID, Status: "ok", ActiveModel: &entry, Chosen: true})
}

func handleUnsetActiveModel(c *sdk.Call) error {
	req, topic, ok, err := request(c, ipc.RegistryOpUnsetActiveModel)
	if !ok {
		return err
	}
	if err := c.KVDelete(keyActive); err != nil && hostapi.CodeOf(err) != hostapi.CodeNotFound {
		return fail(c, topic, req.CorrelationID, fmt.Sprintf("registry: unset_active_model: the choice was not forgotten: %v", err))
	}
	if err := c.Publish(ipc.RegistryActiveModelChangedTopic, []byte("null")); err != nil {
		c.Log(hostapi.LogWarn, "registry: active_model_changed not published: "+err.Error())
	}
	entries, err := models(c)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "registry: unset_active_model: "+err.Error())
	}
	reply := resolve(c, entries)
	reply.CorrelationID, reply.Status = req.CorrelationID, "ok"
	return c.PublishJSON(topic, reply)
}

// handleCapsulesLoaded drops the cached list: a provider reloaded in place
// keeps its id, so the responder set alone would not notice its new
// models or readiness. Only the kernel announces loads.
func handleCapsulesLoaded(c *sdk.Call) error {
	if c.SourceID() != ipc.KernelSourceID {
		c.Log(hostapi.LogWarn, fmt.Sprintf("registry: ignored %s from %q, which is not the kernel", ipc.CapsulesLoadedTopic, c.SourceID()))
		return nil
	}
	if err := c.KVDelete(keyCache); err != nil && hostapi.CodeOf(err) != hostapi.CodeNotFound {
		return fmt.Errorf("drop the provider cache: %w", err)
	}
	return nil
}

// maxNamed bounds how many known ids an unknown-model error names.
const maxNamed = 12

// unknownModel is set_active_model's error for id: it names the models of
// the provider id names (else every known id), at most maxNamed of them,
// and the command that lists them all.
func unknownModel(id string, found discovery) string {
	provider, _, split := ipc.SplitModelID(id)
	var known, theirs []string
	for _, e := range found.Entries {
		known = append(known, e.ID)
		if split && e.Provider == provider {
			theirs = append(theirs, e.ID)
		}
	}
	msg := fmt.Sprintf("registry: unknown model %q", id)
	if !split && id != "" {
		msg += ` (a model id is "<provider>:<model>")`
	}
	named := func(ids []string) string {
		if len(ids) > maxNamed {
			return strings.Join(ids[:maxNamed], ", ") + fmt.Sprintf(" and %d more", len(ids)-maxNamed)
		}
		return strings.Join(ids, ", ")
	}
	switch {
	case len(theirs) > 0:
		msg += fmt.Sprintf("; %s offers %s", provider, named(theirs))
	case len(known) == 0:
		msg += "; no provider offers any model"
	case split:
		msg += fmt.Sprintf("; no provider %q is loaded; known: %s", provider, named(known))
	default:
		msg += "; known: " + named(known)
	}
	if len(found.Missing) > 0 {
		msg += "; not answering: " + strings.Join(found.Missing, ", ")
	}
	return msg + "; astrid models list shows every model"
}
