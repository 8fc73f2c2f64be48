package mcpserve

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// subscribe accepts a client's subscription to a resource that is
// served (the go-sdk keeps who subscribed to what), and starts listening
// for the capsules' resource.v1.updated.<id> events if it has not yet.
func (s *Server) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if err := checkURI(uri); err != nil {
		return invalidParams("%v", err)
	}
	if s.owner(uri) == "" {
		return mcp.ResourceNotFoundError(uri)
	}
	return s.watch()
}

// unsubscribe has nothing of its own to undo: the go-sdk forgets the
// session's subscription, and the listening goes on for the others.
func (s *Server) unsubscribe(context.Context, *mcp.UnsubscribeRequest) error { return nil }

// watch opens the subscription to the capsules' update events once.
func (s *Server) watch() error {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.updates != nil {
		return nil
	}
	sub, err := s.opts.Kernel.Subscribe(s.caller(), ipc.ResourceUpdatedTopic("*"), true)
	if err != nil {
		return internalError("listening for resource updates: %v", err)
	}
	s.updates = sub
	s.watching.Add(1)
	go func() {
		defer s.watching.Done()
		s.relayUpdates(sub)
	}()
	return nil
}

// relayUpdates tells the subscribed clients that a resource changed when
// the capsule that owns it says so on its own topic; a capsule's word
// about another's resource is dropped.
func (s *Server) relayUpdates(sub bus.Subscription) {
	for {
		d, err := sub.Recv(s.life)
		if err != nil {
			return
		}
		src := d.Envelope.SourceID
		if d.Envelope.Topic != ipc.ResourceUpdatedTopic(src) {
			continue
		}
		var u ipc.ResourceUpdated
		if json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &u) != nil || checkURI(u.URI) != nil {
			s.log.Warn("mcp serve: malformed resource update", "capsule", src)
			continue
		}
		if owner := s.owner(u.URI); owner != src {
			s.log.Warn("mcp serve: resource update dropped: the capsule does not own the resource", "capsule", src, "uri", clip(u.URI), "owner", owner)
			continue
		}
		if err := s.srv.ResourceUpdated(s.life, &mcp.ResourceUpdatedNotificationParams{URI: u.URI}); err != nil {
			s.log.Debug("mcp serve: resource update not sent", "uri", clip(u.URI), "err", err)
		}
	}
}

// watchLoads re-reads the lists whenever the kernel says capsules loaded
// or unloaded (astrid.v1.capsules_loaded), so that clients hear of a
// change (list_changed, and a declared file's update) without listing
// first. Started once, by the first Sync.
func (s *Server) watchLoads() {
	s.loadsOnce.Do(func() {
		// Unscoped: the kernel says it once as a system event (no
		// principal), which stands for the default principal, and once
		// for each other principal. Through the daemon every
		// subscription is scoped to the client's principal, so a client
		// of the default principal hears none and relies on re-reading
		// at each list request.
		sub, err := s.opts.Kernel.Subscribe(s.caller(), ipc.CapsulesLoadedTopic, false)
		if err != nil {
			s.log.Warn("mcp serve: not told when capsules load; the lists are re-read on each list request only", "err", err)
			return
		}
		s.watching.Add(1)
		go func() {
			defer s.watching.Done()
			defer sub.Close()
			for {
				d, err := sub.Recv(s.life)
				if err != nil {
					return
				}
				if p := d.Envelope.Principal; d.Envelope.SourceID != ipc.KernelSourceID || (p != "" && p != s.opts.Principal) {
					continue
				}
				if err := s.Sync(s.life); err != nil && s.life.Err() == nil {
					s.log.Warn("mcp serve: lists not re-read after capsules loaded", "err", err)
				}
			}
		}()
	})
}

// Close stops listening for resource updates and loads; the server
// serves no further.
func (s *Server) Close() {
	s.stop()
	s.watchMu.Lock()
	if s.updates != nil {
		s.updates.Close()
	}
	s.watchMu.Unlock()
	s.watching.Wait()
}
