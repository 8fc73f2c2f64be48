package registryclient

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

// ClientID is the identity registry requests are made under.
const ClientID = "astrid-cli-models"

// ACL lets the client send the registry's four requests and hear their
// scoped replies and the announcements of a changed active model, and
// nothing else.
func ACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{
		ID: ClientID,
		Publish: []string{
			ipc.RegistryGetProvidersTopic, ipc.RegistryGetActiveModelTopic,
			ipc.RegistrySetActiveModelTopic, ipc.RegistryUnsetActiveModelTopic,
		},
		Subscribe: []string{ipc.RegistryResponsePattern, ipc.RegistryActiveModelChangedTopic},
	}
}

// Kernel is the part of the kernel a frontend reaches.
type Kernel interface {
	request.Kernel
	Subscribe(from dispatch.Caller, pattern string, scoped bool) (bus.Subscription, error)
	Interceptors(topic string) []string
}

// ErrNoRegistry is returned when no capsule serves registry requests.
var ErrNoRegistry = errors.New("no provider registry is loaded (nothing handles registry.v1.*)")

// ErrRejected wraps the registry's own error answer (an unknown model).
var ErrRejected = errors.New("registry")

// topics maps each op to its request topic.
var topics = map[string]string{
	ipc.RegistryOpGetProviders:     ipc.RegistryGetProvidersTopic,
	ipc.RegistryOpGetActiveModel:   ipc.RegistryGetActiveModelTopic,
	ipc.RegistryOpSetActiveModel:   ipc.RegistrySetActiveModelTopic,
	ipc.RegistryOpUnsetActiveModel: ipc.RegistryUnsetActiveModelTopic,
}

// Ask sends req (its correlation id is set here) as op for principal and
// returns the registry's reply, or its error answer wrapped in
// ErrRejected. ctx bounds the wait.
func Ask(ctx context.Context, k Kernel, principal, op string, req ipc.RegistryRequest) (ipc.RegistryReply, error) {
	var reply ipc.RegistryReply
	topic, ok := topics[op]
	if !ok {
		return reply, fmt.Errorf("registry: unknown operation %q", op)
	}
	registries := k.Interceptors(topic)
	if len(registries) == 0 {
		return reply, ErrNoRegistry
	}
	req.CorrelationID = request.NewID("")
	caller := dispatch.Caller{Capsule: ClientID, Principal: principal}
	body, err := json.Marshal(req)
	if err != nil {
		return reply, fmt.Errorf("registry %s: %w", op, err)
	}
	answer, err := request.Ask(ctx, k, caller, topic, body, ipc.RegistryResponseTopic(op, req.CorrelationID), req.CorrelationID,
		func(source string) bool { return slices.Contains(registries, source) })
	if err != nil {
		return reply, fmt.Errorf("registry %s: %w", op, err)
	}
	if err := json.Unmarshal(answer, &reply); err != nil {
		return reply, fmt.Errorf("registry %s: malformed reply: %w", op, err)
	}
	if reply.Error != "" {
		// The registry's error names the operation and the model.
		return reply, fmt.Errorf("%w: %s", ErrRejected, strings.TrimPrefix(reply.Error, "registry: "))
	}
	return reply, nil
}

// List rediscovers the models and returns them with the principal's active
// one.
func List(ctx context.Context, k Kernel, principal string) (ipc.RegistryReply, error) {
	return Ask(ctx, k, principal, ipc.RegistryOpGetProviders, ipc.RegistryRequest{})
}

// Current returns the principal's active model (nil when no provider is
// loaded) and whether the principal chose it.
func Current(ctx context.Context, k Kernel, principal string) (ipc.RegistryReply, error) {
	return Ask(ctx, k, principal, ipc.RegistryOpGetActiveModel, ipc.RegistryRequest{})
}

// Set makes id ("<provider>:<model>") the principal's active model.
func Set(ctx context.Context, k Kernel, principal, id string) (ipc.RegistryReply, error) {
	return Ask(ctx, k, principal, ipc.RegistryOpSetActiveModel, ipc.RegistryRequest{ModelID: id})
}

// Unset forgets the principal's choice; the reply names the default that
// now applies.
func Unset(ctx context.Context, k Kernel, principal string) (ipc.RegistryReply, error) {
	return Ask(ctx, k, principal, ipc.RegistryOpUnsetActiveModel, ipc.RegistryRequest{})
}
