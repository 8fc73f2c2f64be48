package approval

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// catalogueKey holds the cached mutable flags (volatile).
const catalogueKey = "~catalogue"

// describeWindow bounds one describe fan-out: 500 ms, as the prompt
// builder's. (In nanoseconds: time is not among the packages a built-in
// capsule imports, and the untyped constant becomes a time.Duration.)
const describeWindow = 500 * 1000 * 1000

// catalogueMaxAge is how long a cached catalogue is trusted, in
// nanoseconds: one minute. astrid.v1.capsules_loaded is a system event,
// handled as the default principal, so it clears only that principal's
// cache; a capsule reloaded under the same id (a new version whose
// manifest now marks a tool mutable) leaves the capsule set unchanged, and
// every other principal would otherwise keep the old flags forever.
const catalogueMaxAge = 60 * 1000 * 1000 * 1000

// The cached catalogue is text, one KV record read on every tool call, so
// reading it must cost next to nothing (encoding/json of a map of every
// tool was most of this capsule's time per call):
//
//	<collected at, host-clock Unix nanoseconds>
//	<the capsules asked, comma-separated, in dispatch order>
//	<tool> <capsule> <s if mutable and asking for itself, 1 if mutable, else 0>
//	...
//
// Tool names, capsule ids and nanoseconds hold no space, comma or newline.

// verdict is what the approval layer knows about a tool.
type verdict struct {
	mutable bool
	// described is false when the provider's describe answer did not
	// list the tool (or another capsule's did first): it is then treated
	// as mutable, and the question says why.
	described bool
	// asksItself: the provider's manifest says the tool asks the person
	// itself, per call, through the host approval call (asks_approval,
	// stamped by the kernel); this layer then does not ask for the tool
	// as a whole. Only ever true with described (the provider's own word).
	asksItself bool
}

// classify says whether provider's tool changes things, from the cached
// catalogue, or a fresh describe fan-out when the cache is missing, stale,
// for another set of capsules, or does not know the tool.
func classify(c *sdk.Call, tool, provider string) (verdict, error) {
	responders, err := describeResponders(c)
	if err != nil {
		return verdict{}, err
	}
	if raw, ok, err := c.KVGet(catalogueKey); err == nil && ok {
		if capsule, flag, found := lookup(string(raw), strings.Join(responders, ","), c.Now().UnixNano(), tool); found && capsule == provider {
			return flagVerdict(flag), nil
		}
	}
	text, err := describe(c)
	if err != nil {
		return verdict{}, err
	}
	capsule, flag, found := lookup(text, "", 0, tool)
	switch {
	case !found:
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: %s's tool %q is not in any describe answer; treated as mutable", provider, tool))
		return verdict{mutable: true}, nil
	case capsule != provider:
		// sdk.DescribeTools keeps a name once, from the first capsule in
		// dispatch order; a capsule describing another's tool as read-only
		// (or as asking for itself) must not talk a call past the question.
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: tool %q is described by %s but provided by %s; treated as mutable", tool, capsule, provider))
		return verdict{mutable: true}, nil
	}
	return flagVerdict(flag), nil
}

// The catalogue's flags.
const (
	flagReadOnly   = "0"
	flagMutable    = "1"
	flagAsksItself = "s"
)

// flagVerdict is the verdict of the provider's own describe entry.
func flagVerdict(flag string) verdict {
	switch flag {
	case flagReadOnly:
		return verdict{described: true}
	case flagAsksItself:
		return verdict{mutable: true, described: true, asksItself: true}
	}
	return verdict{mutable: true, described: true}
}

// lookup finds tool in a cached catalogue. With now > 0 the catalogue
// counts only if it was collected for responders and less than
// catalogueMaxAge before now.
func lookup(text, responders string, now int64, tool string) (capsule, flag string, found bool) {
	at, rest, _ := strings.Cut(text, "\n")
	asked, rest, _ := strings.Cut(rest, "\n")
	if now > 0 {
		t, err := strconv.ParseInt(at, 10, 64)
		if err != nil || asked != responders || now-t >= catalogueMaxAge || now < t {
			return "", "", false
		}
	}
	rest = "\n" + rest
	i := strings.Index(rest, "\n"+tool+" ")
	if i < 0 {
		return "", "", false
	}
	line := rest[i+1+len(tool)+1:]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	capsule, flag, ok := strings.Cut(line, " ")
	return capsule, flag, ok
}

// describeResponders is who answers describe now, as sdk.DescribeTools
// asks them: in dispatch order, once each, without this capsule.
func describeResponders(c *sdk.Call) ([]string, error) {
	ids, err := c.Interceptors(ipc.ToolRequestDescribeTopic)
	if err != nil {
		return nil, err
	}
	self := c.CapsuleID()
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != self && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// describe runs the fan-out and caches what it found; it returns the
// catalogue's text.
func describe(c *sdk.Call) (string, error) {
	found, err := sdk.DescribeTools(c, describeWindow)
	if err != nil {
		return "", fmt.Errorf("describe fan-out: %w", err)
	}
	if len(found.Missing) > 0 {
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: capsules did not answer describe: %v; their tools are treated as mutable", found.Missing))
	}
	var b strings.Builder
	b.WriteString(strconv.FormatInt(c.Now().UnixNano(), 10))
	b.WriteByte('\n')
	b.WriteString(strings.Join(found.Responders, ","))
	for _, t := range found.Tools {
		if ipc.ValidateToolName(t.Name) != nil {
			continue // no call can name it
		}
		flag := flagReadOnly
		switch {
		case t.Mutable && t.AsksApproval:
			flag = flagAsksItself
		case t.Mutable:
			flag = flagMutable
		}
		b.WriteString("\n" + t.Name + " " + t.Capsule + " " + flag)
	}
	text := b.String()
	if err := c.KVSet(catalogueKey, []byte(text)); err != nil {
		// The answer still stands for this call; the next one asks again.
		c.Log(hostapi.LogWarn, "approval: catalogue not cached: "+err.Error())
	}
	return text, nil
}

// handleCapsulesLoaded drops the cached catalogue: the set of tools, or
// their flags, may have changed. (The session tokens of a capsule
// unloaded for good are the kernel's to drop.)
func handleCapsulesLoaded(c *sdk.Call) error {
	if c.SourceID() != ipc.KernelSourceID {
		return nil
	}
	return c.KVDelete(catalogueKey)
}
