package chatui

import (
	"context"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/commandclient"
	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/ipc"
)

// turn is a running agent turn as the UI drives it; *agentclient.Turn is
// one. Next is called by one goroutine at a time (the UI asks for the next
// event only after the previous one arrived).
type turn interface {
	Next(ctx context.Context) (agentclient.Event, error)
	Answer(requestID, decision string) error
	AnswerElicit(r ipc.ElicitResponse) error
	Cancel() error
	Close()
}

// backend is what the UI reaches of the kernel: it starts turns and asks
// the provider registry. kernelBackend is the one over an
// agentclient.Kernel; tests give a fake.
type backend interface {
	start(ctx context.Context, p agentclient.Prompt) (turn, error)
	listModels(ctx context.Context) (ipc.RegistryReply, error)
	currentModel(ctx context.Context) (ipc.RegistryReply, error)
	setModel(ctx context.Context, id string) (ipc.RegistryReply, error)
}

// kernelBackend runs turns and registry requests for principal over k
// (the kernel's frontend in-process; later the daemon's socket).
type kernelBackend struct {
	k         agentclient.Kernel
	principal string
}

func (b kernelBackend) start(ctx context.Context, p agentclient.Prompt) (turn, error) {
	t, err := agentclient.Start(ctx, b.k, p)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (b kernelBackend) listModels(ctx context.Context) (ipc.RegistryReply, error) {
	return registryclient.List(ctx, b.k, b.principal)
}

func (b kernelBackend) currentModel(ctx context.Context) (ipc.RegistryReply, error) {
	return registryclient.Current(ctx, b.k, b.principal)
}

func (b kernelBackend) setModel(ctx context.Context, id string) (ipc.RegistryReply, error) {
	return registryclient.Set(ctx, b.k, b.principal, id)
}

// commandLister is a backend that can list the capsules' slash commands
// (kernelBackend; a test's fake may not).
type commandLister interface {
	listCommands(ctx context.Context, reserved []string) ([]commandclient.Command, error)
}

func (b kernelBackend) listCommands(ctx context.Context, reserved []string) ([]commandclient.Command, error) {
	k, ok := b.k.(commandclient.Kernel)
	if !ok {
		return nil, nil
	}
	return commandclient.List(ctx, k, b.principal, reserved)
}
