package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/manifest"
)

// toolNames are the tools a capsule provides: its manifest's word
// (manifest.ProvidedTools), engines' interceptors included. Which topics
// name a tool is the manifest package's knowledge, never the runtime's.
func toolNames(m *manifest.Manifest, s capsule.Surface) []string {
	return m.ProvidedTools(s.Interceptors...)
}

// plumbingGranted applies the manifest's tool-plumbing rule (DESIGN §4c) to
// the ACL the capsule is about to get, engines' additions included, so that
// it holds for every engine and for a manifest whose diagnostics a caller
// did not read.
func plumbingGranted(m *manifest.Manifest, acl dispatch.CapsuleACL) error {
	if m.Capabilities.ToolMiddleware {
		return nil
	}
	intercepts := make([]string, 0, len(acl.Interceptors))
	for _, i := range acl.Interceptors {
		intercepts = append(intercepts, i.Pattern)
	}
	tools := make([]string, 0, len(m.Tools))
	for _, t := range m.Tools {
		tools = append(tools, t.Name)
	}
	var errs []error
	for _, v := range manifest.ToolPlumbingViolations(acl.Publish, acl.Subscribe, intercepts, tools) {
		errs = append(errs, v)
	}
	return errors.Join(errs...)
}

// claimTools settles, before a boot loads anything, which candidate
// provides each tool a manifest declares (manifest.ProvidedTools), so that
// the answer never depends on directory names or load order. A built-in keeps its tools: an installed
// capsule declaring one of them is refused. A tool declared by two or more
// installed capsules stays with the one that provided it when the capsules
// last changed (rec, same id and directory); the others are refused, naming
// it. When rec names none of them, none gets the tool: each is refused,
// naming the others, until the operator removes one, since nothing else
// says which was there first and "the first directory by name" is exactly
// what let a newly installed capsule take a tool over. (While the kernel
// runs, the capsule already loaded keeps its tools: toolsFree.)
func claimTools(cands []*Candidate, rec providerRecord) (kept []*Candidate, refused []Problem) {
	for _, c := range cands {
		if c.Builtin() {
			kept = append(kept, c)
			continue
		}
		var errs []error
		for _, t := range toolClaims(c) {
			var builtin string
			var others []string // installed rivals
			for _, o := range cands {
				if o == c || !claimsOverlap(t, toolClaims(o)) {
					continue
				}
				if o.Builtin() {
					builtin = o.ID()
				} else {
					others = append(others, o.ID())
				}
			}
			holder, held := rec.holder(t)
			held = held && (holder.ID == c.ID() && holder.Dir == c.Dir || slices.ContainsFunc(cands, func(o *Candidate) bool {
				return o != c && o.ID() == holder.ID && o.Dir == holder.Dir && slices.Contains(others, o.ID())
			}))
			switch {
			case builtin != "":
				errs = append(errs, fmt.Errorf("capsule %s in %s cannot provide tool %s: built-in capsule %s provides it", c.ID(), c.Dir, t, builtin))
			case len(others) == 0 || held && holder.ID == c.ID():
			case held:
				errs = append(errs, fmt.Errorf("capsule %s in %s cannot provide tool %s: capsule %s already provides it, and a tool keeps its provider (remove %s first to hand the tool over)", c.ID(), c.Dir, t, holder.ID, holder.ID))
			default:
				errs = append(errs, fmt.Errorf("capsule %s in %s cannot provide tool %s: capsule %s declares it too, and none of them loads until the others are removed (a tool's provider never depends on directory names)", c.ID(), c.Dir, t, strings.Join(others, ", ")))
			}
		}
		if err := errors.Join(errs...); err != nil {
			refused = append(refused, Problem{ID: c.ID(), Dir: c.Dir, Err: err})
			continue
		}
		kept = append(kept, c)
	}
	return kept, refused
}

// toolClaims are the tools c's manifest says it provides
// (manifest.ProvidedTools), and for each MCP server
// the namespace "<server id>:*", since its tools are known only once it
// runs and are all named "<server id>:<tool>".
func toolClaims(c *Candidate) []string {
	claims := toolNames(c.Manifest, capsule.Surface{})
	for _, srv := range c.Manifest.MCPServers {
		claims = append(claims, srv.ID+":*")
	}
	return claims
}

// claimsOverlap reports whether claim t and any of claims may name one
// tool: the same name, or a name inside a server's "<id>:*" namespace.
func claimsOverlap(t string, claims []string) bool {
	in := func(name, ns string) bool {
		return strings.HasSuffix(ns, ":*") && strings.HasPrefix(name, strings.TrimSuffix(ns, "*"))
	}
	for _, o := range claims {
		if o == t || in(t, o) || in(o, t) {
			return true
		}
	}
	return false
}

// holder is who rec says provided claim t: the tool's provider, or for a
// namespace "<id>:*" the provider of the tools recorded in it.
func (rec providerRecord) holder(t string) (recordedProvider, bool) {
	if p, ok := rec[t]; ok {
		return p, true
	}
	if !strings.HasSuffix(t, ":*") {
		return recordedProvider{}, false
	}
	prefix := strings.TrimSuffix(t, "*")
	names := make([]string, 0, len(rec))
	for name := range rec {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return recordedProvider{}, false
	}
	slices.Sort(names)
	return rec[names[0]], true
}

// providerRecord is who provided each tool when the loaded capsules last
// changed: tool → capsule. Boot reads it to keep a contested tool with its
// provider across restarts (claimTools).
type providerRecord map[string]recordedProvider

type recordedProvider struct {
	ID  string `json:"capsule"`
	Dir string `json:"dir,omitempty"` // "" for a built-in
}

// readProviders reads Options.ProvidersFile. A missing, unreadable or
// malformed record is an empty one: it can only make a contested tool go to
// no one, never to a newcomer.
func (r *Runtime) readProviders() providerRecord {
	rec := providerRecord{}
	if r.opts.ProvidersFile == "" {
		return rec
	}
	data, err := os.ReadFile(r.opts.ProvidersFile)
	if err == nil {
		err = json.Unmarshal(data, &rec)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.log.Warn("tool provider record ignored", "file", r.opts.ProvidersFile, "err", err)
		return providerRecord{}
	}
	return rec
}

// saveProviders records the loaded capsules' tools, replacing the file
// whole (temporary file and rename) so that a reader never sees half of it.
// Entries are read under mu; of two saves at once, each writes a whole
// record and the later rename wins.
func (r *Runtime) saveProviders() {
	if r.opts.ProvidersFile == "" {
		return
	}
	rec := providerRecord{}
	r.mu.Lock()
	for _, e := range r.entries {
		if e.loaded {
			for _, t := range e.tools {
				rec[t] = recordedProvider{ID: e.cand.ID(), Dir: e.cand.Dir}
			}
		}
	}
	r.mu.Unlock()
	data, err := json.MarshalIndent(rec, "", "  ")
	if err == nil {
		err = writeReplacing(r.opts.ProvidersFile, data)
	}
	if err != nil {
		r.log.Warn("tool provider record not saved", "file", r.opts.ProvidersFile, "err", err)
	}
}

func writeReplacing(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
