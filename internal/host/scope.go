package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/gate"
)

// A Scope is one request context (DESIGN §4a, §8): what a client's
// request carries besides its principal, so that the work it begins acts
// on the client's directory and settings, with or without a daemon. Every
// envelope names its scope by id (ipc.Envelope.Scope); a handler call runs
// in the scope of the event that invoked it and its publishes carry it on,
// so the whole turn (the prompt builder, the provider, every tool call)
// works in it. Only an uplink opens one (hostapi.Uplink.OpenScope), for
// the client it serves; a capsule can neither choose nor change the scope
// its calls run in.
type Scope struct {
	// Principal is who the scope was opened for. A call for another
	// principal does not use it.
	Principal string
	// Workspace is the directory `*` grants and relative paths resolve
	// against, absolute and clean; the uplink checked it.
	Workspace string
	// Config overrides capsules' [env] values for this scope only:
	// capsule id → key → value (a provider's api_key and base_url from
	// the client's environment). Never stored, never logged.
	Config map[string]map[string]string
}

// scopeEntry is an open scope.
type scopeEntry struct {
	Scope
	// streams are the streaming HTTP clients of the capsules whose
	// calls in this scope reach a URL the scope set, by capsule: one
	// per capsule and scope, so a chat's turns reuse their connections;
	// Close lets their idle connections go.
	mu      sync.Mutex
	streams map[*Capsule]*http.Client
	// onClose run once the scope is closed (OnClose), in order.
	onClose []func()
}

// Scopes holds the open scopes of a kernel. It is safe for concurrent use.
type Scopes struct {
	mu   sync.RWMutex
	m    map[uint64]*scopeEntry
	next uint64
}

// NewScopes returns an empty table.
func NewScopes() *Scopes { return &Scopes{m: map[uint64]*scopeEntry{}} }

// Open records s and returns its id (never 0).
func (ss *Scopes) Open(s Scope) uint64 {
	cp := &scopeEntry{Scope: Scope{Principal: s.Principal, Workspace: s.Workspace}}
	if s.Config != nil {
		cp.Config = make(map[string]map[string]string, len(s.Config))
		for id, kv := range s.Config {
			m := make(map[string]string, len(kv))
			for k, v := range kv {
				m[k] = v
			}
			cp.Config[id] = m
		}
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.next++
	ss.m[ss.next] = cp
	return ss.next
}

// Close forgets scope id: calls still running in it from then on have no
// workspace and no overrides (closed).
func (ss *Scopes) Close(id uint64) {
	ss.mu.Lock()
	s := ss.m[id]
	delete(ss.m, id)
	ss.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	for _, c := range s.streams {
		c.CloseIdleConnections()
	}
	s.streams = nil
	fns := s.onClose
	s.onClose = nil
	s.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Lookup returns open scope id (its principal and workspace; never its
// settings).
func (ss *Scopes) Lookup(id uint64) (Scope, bool) {
	s, ok := ss.get(id)
	if !ok {
		return Scope{}, false
	}
	return Scope{Principal: s.Principal, Workspace: s.Workspace}, true
}

// OnClose has fn run when scope id closes (on the closing goroutine, so
// fn must not block for long); false, and fn not kept, when id is not
// open. What lives only as long as a scope (a session's own MCP servers)
// ends with it this way, however its client left.
func (ss *Scopes) OnClose(id uint64, fn func()) bool {
	// Under ss.mu, so that Close cannot take the entry between the
	// lookup and the append.
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	s, ok := ss.m[id]
	if !ok {
		return false
	}
	s.mu.Lock()
	s.onClose = append(s.onClose, fn)
	s.mu.Unlock()
	return true
}

// Len is how many scopes are open.
func (ss *Scopes) Len() int {
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	return len(ss.m)
}

func (ss *Scopes) get(id uint64) (*scopeEntry, bool) {
	if ss == nil {
		return nil, false
	}
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	s, ok := ss.m[id]
	return s, ok
}

// closedScope is what a call whose scope is gone (its client left) or
// belongs to another principal works in: no workspace, no overrides. It
// never falls back to the kernel's own workspace: a request that said
// where it works must not land somewhere else.
var closedScope = &scopeEntry{}

// scope is the scope the call runs in; nil for an unscoped call (the
// kernel's workspace and the capsule's stored settings).
func (call *Call) scope() *scopeEntry {
	id := call.caller.Scope
	if id == 0 {
		return nil
	}
	s, ok := call.c.deps.Scopes.get(id)
	if !ok || s.Principal != call.principal {
		return closedScope
	}
	return s
}

// gate is the capsule's gate for this call: the capsule's own, or one
// whose workspace is the call's scope's.
func (call *Call) gate() *gate.Gate {
	s := call.scope()
	if s == nil || s.Workspace == "" && s != closedScope {
		return call.c.gate // a scope of settings alone works on the kernel's workspace
	}
	call.mu.Lock()
	defer call.mu.Unlock()
	if call.scopedGate == nil {
		g, err := call.c.gate.WithWorkspace(s.Workspace)
		if err != nil {
			// A workspace the gate cannot take (the uplink checks
			// it first): nothing resolves against one.
			call.c.log.Warn("the request's workspace is refused", "principal", call.principal, "err", err)
			g, _ = call.c.gate.WithWorkspace("")
		}
		call.scopedGate = g
	}
	return call.scopedGate
}

// scopeURLs are the http(s) URLs among the scope's overrides for this
// capsule (a provider's base_url from the client's environment), allowed
// as the capsule's own [env] URLs are (HTTPClient).
func (call *Call) scopeURLs() []string {
	s := call.scope()
	if s == nil {
		return nil
	}
	var out []string
	for k, v := range s.Config[call.c.id] {
		if isHTTPURL(v) && call.storedValue(k) == "" {
			out = append(out, v)
		}
	}
	return out
}

// OpenScope implements hostapi.Uplink.
func (call *Call) OpenScope(principal string, s hostapi.Scope) (uint64, string, error) {
	defer call.leave(call.enter(opPublish))
	const op = "open_scope"
	if _, err := call.onBehalf(op, principal); err != nil {
		return 0, "", err
	}
	if call.c.deps.Scopes == nil {
		return 0, "", hostapi.Errorf(hostapi.CodeNotSupported, op, "this kernel keeps no request scopes")
	}
	ws := s.Workspace
	if ws != "" {
		var err error
		if ws, err = CheckWorkspace(ws, call.c.deps.Home, s.PeerUID); err != nil {
			return 0, "", hostapi.Errorf(hostapi.CodeInvalid, op, "%v", err)
		}
		if _, err := call.c.gate.WithWorkspace(ws); err != nil {
			return 0, "", hostapi.Errorf(hostapi.CodeInvalid, op, "%v", err)
		}
	}
	return call.c.deps.Scopes.Open(Scope{Principal: principal, Workspace: ws, Config: s.Config}), ws, nil
}

// CloseScope implements hostapi.Uplink.
func (call *Call) CloseScope(id uint64) {
	defer call.leave(call.enter(opPublish))
	if !call.c.uplink || call.c.deps.Scopes == nil {
		return
	}
	call.c.deps.Scopes.Close(id)
}

// PublishIn implements hostapi.Uplink.
func (call *Call) PublishIn(principal string, scope uint64, topic string, payload []byte) error {
	return call.publishIn(principal, scope, topic, payload, nil)
}

// RequestIn implements hostapi.Uplink.
func (call *Call) RequestIn(principal string, scope uint64, topic string, payload []byte, req hostapi.Request) error {
	return call.publishIn(principal, scope, topic, payload, &req)
}

func (call *Call) publishIn(principal string, scope uint64, topic string, payload []byte, req *hostapi.Request) error {
	defer call.leave(call.enter(opPublish))
	const op = "publish_as"
	from, err := call.onBehalf(op, principal)
	if err != nil {
		return err
	}
	if scope != 0 {
		s, ok := call.c.deps.Scopes.get(scope)
		if !ok || s.Principal != principal {
			return hostapi.Errorf(hostapi.CodeInvalid, op, "scope %d is not open for principal %s", scope, principal)
		}
	}
	from.Scope = scope
	if req != nil {
		_, err = call.c.deps.Dispatcher.Publish(from, topic, payload, dispatch.RequestOf(dispatch.Request{ReplyTo: req.ReplyTo, CorrelationID: req.CorrelationID, Timeout: req.Timeout}))
	} else {
		_, err = call.c.deps.Dispatcher.Publish(from, topic, payload)
	}
	if err != nil {
		return hostapi.Errorf(codeOfDispatch(err), op, "%v", err)
	}
	return nil
}

// scopedConfig is Config in scope s, given the capsule's value v. The
// operator's stored value (astrid capsule env set) wins, as it does
// in-process, where the environment fills only what is unset; the scope's
// value comes next, then the daemon's own environment (Deps.ConfigFallback).
// A secret that is not the client's own is withheld when the scope chose
// the endpoint (a base URL the operator did not store): the operator's key
// never goes to a server the client named.
func (call *Call) scopedConfig(s *scopeEntry, key, v string, ok bool) (string, bool) {
	over, has := s.Config[call.c.id][key]
	if call.c.secrets[key] && call.scopeChoseEndpoint(s) {
		return over, true
	}
	if call.storedValue(key) != "" {
		return v, ok
	}
	if has && over != "" {
		return over, true
	}
	return v, ok
}

// storedValue is the capsule's value for key when the operator stored it,
// "" when it is unset or came from the daemon's environment.
func (call *Call) storedValue(key string) string {
	v := strings.TrimSpace(call.c.config[key])
	if fb, ok := call.c.deps.ConfigFallback[call.c.id][key]; ok && strings.TrimSpace(fb) == v {
		return ""
	}
	return v
}

// scopeChoseEndpoint reports whether s sets an http(s) URL for one of the
// capsule's keys that the operator did not store.
func (call *Call) scopeChoseEndpoint(s *scopeEntry) bool {
	for k, v := range s.Config[call.c.id] {
		if isHTTPURL(v) && call.storedValue(k) == "" {
			return true
		}
	}
	return false
}

func isHTTPURL(v string) bool {
	u, err := url.Parse(strings.TrimSpace(v))
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// scopedStreamingClient is the capsule's streaming client for the call's
// scope, allowing allow (the capsule's URLs and the scope's), made once
// per scope.
func (call *Call) scopedStreamingClient(allow urlAllowances) (*http.Client, error) {
	s := call.scope()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.streams[call.c]; c != nil {
		return c, nil
	}
	c, err := call.c.newStreamingClient(allow)
	if err != nil {
		return nil, err
	}
	if s != closedScope {
		if s.streams == nil {
			s.streams = map[*Capsule]*http.Client{}
		}
		s.streams[call.c] = c
	}
	return c, nil
}

// CheckWorkspace checks a workspace a client asked for (DESIGN §4a) and
// returns it absolute, clean and with its symlinks resolved: an existing
// directory, not $ASTRID_HOME nor inside it (home; a workspace that holds
// the home, such as ~, is fine: the gate keeps the home out of reach), and,
// for a peer of another uid than this process's (peerUID ≥ 0), a
// directory that uid owns. The error says which, naming the directory.
func CheckWorkspace(ws, home string, peerUID int) (string, error) {
	if !filepath.IsAbs(ws) {
		return "", fmt.Errorf("the workspace %q is not an absolute path", ws)
	}
	ws = filepath.Clean(ws)
	fi, err := os.Stat(ws)
	switch {
	case os.IsNotExist(err):
		return "", fmt.Errorf("the workspace %s does not exist", ws)
	case err != nil:
		return "", fmt.Errorf("the workspace %s: %v", ws, err)
	case !fi.IsDir():
		return "", fmt.Errorf("the workspace %s is not a directory", ws)
	}
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	for _, d := range gate.ProtectedDirs(home) {
		if rel, err := filepath.Rel(filepath.FromSlash(d), ws); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("the workspace %s lies in Astrid's home (%s), which no request may work on", ws, d)
		}
	}
	if peerUID >= 0 && peerUID != os.Getuid() {
		if owner, ok := ownerOf(fi); ok && owner != peerUID {
			return "", fmt.Errorf("the workspace %s belongs to uid %d, not to this client's uid %d", ws, owner, peerUID)
		}
	}
	return ws, nil
}

// settingsFingerprint names a scope's provider settings without showing
// them (hostapi.RequestSettingsKey): a hash over every capsule, key and
// value, "" for a scope without settings.
func settingsFingerprint(s *scopeEntry) string {
	if s == nil || len(s.Config) == 0 {
		return ""
	}
	h := sha256.New()
	for _, id := range slices.Sorted(maps.Keys(s.Config)) {
		for _, k := range slices.Sorted(maps.Keys(s.Config[id])) {
			fmt.Fprintf(h, "%s\x00%s\x00%s\x00", id, k, s.Config[id][k])
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
