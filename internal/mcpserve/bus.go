package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/request"
	"github.com/astrid-go/astrid/ipc"
)

// ClientID is the identity the server asks for resources and prompts
// under (its tool calls act as toolclient.ClientID).
const ClientID = "astrid-mcp-serve"

// ACL lets the server run the resource and prompt conventions' describe
// fan-outs, ask a capsule for a read or a get, hear what a capsule says
// changed and when capsules load or unload, and ask the static engines
// for skills and context files;
// nothing else (commands are asked as commandclient.ClientID). For
// kernel.Options.Frontends.
func ACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{
		ID: ClientID,
		Publish: []string{
			ipc.ResourceRequestDescribeTopic, ipc.ResourceReadTopic("*"),
			ipc.PromptRequestDescribeTopic, ipc.PromptGetTopic("*"),
			ipc.CompletionTopic("*"),
			staticSkillsTopic, staticContextTopic,
		},
		Subscribe: []string{
			ipc.ResourceDescribeResponseTopic("*"), ipc.ResourceReadResultTopic, ipc.ResourceUpdatedTopic("*"),
			ipc.PromptDescribeResponseTopic("*"), ipc.PromptGetResultTopic,
			ipc.CompletionResultTopic, ipc.CapsulesLoadedTopic,
			staticSkillsAnswer("*"), staticContextAnswer("*"),
		},
	}
}

// askTimeout bounds a capsule's answer to a read or a get.
const askTimeout = 30 * time.Second

// maxAnswer bounds a capsule's answer as decoded here (the bus's own
// message limit bounds it too).
const maxAnswer = ipc.MaxConventionAnswer

func (s *Server) caller() dispatch.Caller {
	return dispatch.Caller{Capsule: ClientID, Principal: s.opts.Principal}
}

// describe runs a describe fan-out: {} on topic, and each interceptor's
// answer on answerTopic(its id), until each has answered (a capsule with
// two interceptors, its code's and its static engine's, answers twice)
// or the window passes. It returns the answers by capsule, the capsules
// in dispatch order, and the ones that did not answer in full.
func (s *Server) describe(ctx context.Context, topic string, answerTopic func(string) string) (map[string][][]byte, []string, []string, error) {
	k := s.opts.Kernel
	interceptors := k.Interceptors(topic)
	order := distinct(interceptors)
	if len(order) == 0 {
		return nil, nil, nil, nil
	}
	sub, err := k.Subscribe(s.caller(), answerTopic("*"), true)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("mcp serve: listen for %s answers: %w", topic, err)
	}
	defer sub.Close()
	if _, err := k.Publish(s.caller(), topic, json.RawMessage("{}")); err != nil {
		return nil, nil, nil, fmt.Errorf("mcp serve: ask %s: %w", topic, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Window)
	defer cancel()
	waiting := map[string]int{}
	for _, id := range interceptors {
		waiting[id]++
	}
	answers := map[string][][]byte{}
	for len(waiting) > 0 {
		d, err := sub.Recv(ctx)
		if err != nil {
			break
		}
		src := d.Envelope.SourceID
		// Only a capsule's own answer topic counts (the kernel stamps
		// the source).
		if waiting[src] == 0 || d.Envelope.Topic != answerTopic(src) {
			continue
		}
		if waiting[src]--; waiting[src] == 0 {
			delete(waiting, src)
		}
		answers[src] = append(answers[src], ipc.GuestBytes(d.Envelope.Payload))
	}
	missing := make([]string, 0, len(waiting))
	for id := range waiting {
		missing = append(missing, id)
	}
	sort.Strings(missing)
	return answers, order, missing, nil
}

func distinct(ids []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// errNoAnswer is wrapped by ask's errors when the capsule gave no answer.
var errNoAnswer = errors.New("no answer")

// ask sends req (a JSON object) to capsule as a request on topic,
// answered on replyTopic, and decodes the capsule's answer into out. The
// request carries a fresh request_id, which the answer echoes: a reply
// relayed through the daemon's socket has no correlation id of its own,
// and every client of the principal listening on replyTopic hears it.
// Only an answer from capsule itself (the kernel stamps the source) or the
// kernel's failure of the request counts.
func (s *Server) ask(ctx context.Context, capsule, topic, replyTopic string, req, out any) error {
	k := s.opts.Kernel
	corr := request.NewID("mcp_")
	body, err := withRequestID(req, corr)
	if err != nil {
		return err
	}
	sub, err := k.Subscribe(s.caller(), replyTopic, true)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", replyTopic, err)
	}
	defer sub.Close()
	// askTimeout, or ctx's deadline when it is sooner.
	wait := askTimeout
	if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
		wait = max(time.Until(d), time.Millisecond)
	}
	if err := request.Send(k, s.caller(), topic, body, replyTopic, corr, wait); err != nil {
		return fmt.Errorf("ask capsule %s: %w", capsule, err)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// bad says why the capsule's answer cannot be used; it ends the wait
	// as a good answer does.
	var bad error
	_, err = request.Await(ctx, sub, corr, func(d bus.Delivery) (struct{}, bool) {
		e := d.Envelope
		if e.SourceID != capsule {
			return struct{}{}, false
		}
		payload := ipc.GuestBytes(e.Payload)
		if len(payload) > maxAnswer {
			bad = fmt.Errorf("capsule %s: its answer is %d bytes, more than %d", capsule, len(payload), maxAnswer)
			return struct{}{}, true
		}
		var echo struct {
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal(payload, &echo) != nil || (echo.RequestID != corr && e.CorrelationID() != corr) {
			return struct{}{}, false // another request's answer
		}
		if err := json.Unmarshal(payload, out); err != nil {
			bad = fmt.Errorf("capsule %s: malformed answer on %s: %w", capsule, replyTopic, err)
		}
		return struct{}{}, true
	})
	if f, ok := request.AsFailed(err); ok {
		return fmt.Errorf("%w: %s", errNoAnswer, ipc.FailureText(f.RequestFailed, "the request to capsule "+capsule))
	}
	if err != nil {
		return fmt.Errorf("capsule %s: %w within %s: %w", capsule, errNoAnswer, wait.Round(time.Millisecond), err)
	}
	return bad
}

// withRequestID is req, a JSON object, with request_id set to id.
func withRequestID(req any, id string) (json.RawMessage, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("a request must be a JSON object: %w", err)
	}
	m["request_id"], _ = json.Marshal(id)
	return json.Marshal(m)
}
