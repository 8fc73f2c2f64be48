package mcp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A load-time server that says its resource or prompt list changed
// (notifications/resources/list_changed, …/prompts/list_changed) is
// listed again, so that the next describe answers what it serves now; so
// is a restarted one, whose lists may differ. One listing runs at a time,
// and notifications during it make one more. The bus surface stays what
// load bound: a capability the server lacked at load is not added. Lists
// of the servers of other workspaces are not the engine's, and their
// notifications are ignored.

// listChanged lists the served entries again when session is the
// load-time server's.
func (e *Engine) listChanged(session *mcp.ClientSession) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping || e.cur == nil || e.cur.session != session {
		return
	}
	if e.relisting {
		e.relistAgain = true
		return
	}
	e.relisting = true
	e.relistWG.Add(1)
	go e.relist(e.cur)
}

// relist lists s's resources, templates and prompts until no change was
// announced during a listing. It ends with s: Unload waits for it.
func (e *Engine) relist(s *server) {
	defer e.relistWG.Done()
	for {
		ctx, cancel := context.WithCancel(context.Background())
		stop := context.AfterFunc(s.done, cancel)
		srv := e.listServed(ctx, s)
		stop()
		cancel()
		e.mu.Lock()
		current := e.cur == s && !e.stopping
		if current {
			e.served = srv
		}
		again := current && e.relistAgain
		e.relistAgain = false
		if !again {
			e.relisting = false
			e.mu.Unlock()
			if current {
				e.log.Info("mcp server's resources and prompts listed again", "resources", len(srv.resources), "resource_templates", len(srv.templates), "prompts", len(srv.prompts))
			}
			return
		}
		e.mu.Unlock()
	}
}
