// Package hostile is a capsule that misbehaves on purpose: the wasm
// engine's tests build it to wasm and check that each attack is contained.
// It is built only for GOOS=wasip1 (testdata is outside ./...).
package hostile

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// Spin is written by the loop so the compiler keeps it.
var Spin uint64

// kept is what the keep handler saw, held past its call (which the sdk's
// contract forbids a real capsule; here it checks that what the accessors
// returned is not rewritten by the next call's record).
var kept struct {
	Topic     string          `json:"topic"`
	Source    string          `json:"source"`
	Principal string          `json:"principal"`
	Payload   json.RawMessage `json:"payload"`
}

// New returns the capsule.
func New() *sdk.Capsule {
	c := sdk.New("misbehaves on purpose")
	c.Handle("hostile.v1.noop", "noop", func(*sdk.Call) error { return nil })
	c.Handle("hostile.v1.echo", "echo", func(c *sdk.Call) error {
		c.Final(c.Payload())
		return nil
	})
	// serve answers the request it serves with the payload and what it
	// learnt of the request (ipc_serving, ipc_reply).
	c.Handle("hostile.v1.serve", "serve", func(c *sdk.Call) error {
		replyTo, corr := c.Serving()
		return c.ReplyJSON(map[string]any{"payload": json.RawMessage(c.Payload()), "reply_to": replyTo, "correlation_id": corr})
	})
	// providers answers who intercepts the topic its payload names, and
	// who exactly (ipc_interceptors, ipc_exact_interceptors).
	c.Handle("hostile.v1.providers", "providers", func(c *sdk.Call) error {
		var topic string
		if err := json.Unmarshal(c.Payload(), &topic); err != nil {
			return err
		}
		all, err := c.Interceptors(topic)
		if err != nil {
			return err
		}
		exact, err := c.ExactInterceptors(topic)
		if err != nil {
			return err
		}
		out, err := json.Marshal(map[string][]string{"all": all, "exact": exact})
		if err != nil {
			return err
		}
		c.Final(out)
		return nil
	})
	// ask_nobody sends a request nothing takes (ipc_request); the kernel
	// answers it on hostile.v1.noop.
	c.Handle("hostile.v1.ask_nobody", "ask_nobody", func(c *sdk.Call) error {
		return c.Request("hostile.v1.out", []byte(`{}`), hostapi.Request{ReplyTo: "hostile.v1.noop", CorrelationID: "asked-nobody"})
	})
	c.Handle("hostile.v1.loop", "loop", func(*sdk.Call) error {
		for {
			Spin++
		}
	})
	c.Handle("hostile.v1.grow", "grow", func(c *sdk.Call) error {
		var hold [][]byte
		for {
			hold = append(hold, make([]byte, 1<<20))
			hold[len(hold)-1][0] = 1
		}
	})
	c.Handle("hostile.v1.sleep", "sleep", func(*sdk.Call) error {
		time.Sleep(time.Hour)
		return nil
	})
	// nap sleeps for the payload's milliseconds (WASI clock waits, as any
	// guest's time.Sleep), then answers Final with the payload.
	c.Handle("hostile.v1.nap", "nap", func(c *sdk.Call) error {
		var ms int
		if err := c.Decode(&ms); err != nil {
			return err
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		c.Final(c.Payload())
		return nil
	})
	// The tool nap does the same through the tool convention.
	sdk.Tool(c, "nap", "sleeps for ms milliseconds", func(_ *sdk.Call, a struct {
		MS int `json:"ms"`
	}) (string, error) {
		time.Sleep(time.Duration(a.MS) * time.Millisecond)
		return fmt.Sprintf("slept %d ms", a.MS), nil
	})
	// The tool spin never answers: only an interrupt (its cancel key, its
	// deadline) ends it.
	sdk.Tool(c, "spin", "loops forever", func(*sdk.Call, struct{}) (string, error) {
		for {
			Spin++
		}
	})
	c.Handle("hostile.v1.publish_outside", "publish_outside", func(c *sdk.Call) error {
		return c.Publish("forbidden.v1.topic", []byte(`{}`))
	})
	c.Handle("hostile.v1.read_passwd", "read_passwd", func(c *sdk.Call) error {
		b, err := c.FSRead("/etc/passwd")
		if err != nil {
			return err
		}
		c.Final(b)
		return nil
	})
	c.Handle("hostile.v1.panic", "panic", func(c *sdk.Call) error {
		if err := c.SetFailureReply("hostile.v1.failed", []byte(`{"failed":true}`)); err != nil {
			return err
		}
		panic("hostile: boom")
	})
	c.Handle("hostile.v1.badptr", "badptr", badPointers)
	c.Handle("hostile.v1.flood", "flood", func(c *sdk.Call) error {
		payload := []byte(`"` + strings.Repeat("x", 64<<10) + `"`)
		n := 0
		var err error
		for ; n < 10000; n++ {
			if err = c.Publish("hostile.v1.out", payload); err != nil {
				break
			}
		}
		out, _ := json.Marshal(map[string]any{"published": n, "code": uint32(hostapi.CodeOf(err))})
		c.Final(out)
		return nil
	})
	c.Handle("hostile.v1.random", "random", func(c *sdk.Call) error {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		c.Final([]byte(`"` + hex.EncodeToString(b[:]) + `"`))
		return nil
	})
	c.Handle("hostile.v1.cancellable", "cancellable", func(c *sdk.Call) error {
		var key string
		if err := c.Decode(&key); err != nil {
			return err
		}
		if err := c.SetFailureReply("hostile.v1.failed", []byte(`{"cancelled":true}`)); err != nil {
			return err
		}
		if err := c.SetCancelKey(key); err != nil {
			return err
		}
		for {
			Spin++
		}
	})
	c.Handle("hostile.v1.kv", "kv", func(c *sdk.Call) error {
		if err := c.KVSet("k", c.Payload()); err != nil {
			return err
		}
		v, ok, err := c.KVGet("k")
		if err != nil || !ok {
			return fmt.Errorf("kv get: ok=%v err=%v", ok, err)
		}
		if _, ok, _ := c.KVGet("absent"); ok {
			return fmt.Errorf("absent key found")
		}
		keys, err := c.KVList("")
		if err != nil {
			return err
		}
		out, _ := json.Marshal(map[string]any{"value": json.RawMessage(v), "keys": keys, "principal": c.Principal(), "capsule": c.CapsuleID()})
		c.Final(out)
		return nil
	})
	c.Handle("hostile.v1.keep", "keep", func(c *sdk.Call) error {
		kept.Topic, kept.Source, kept.Principal, kept.Payload = c.Topic(), c.SourceID(), c.Principal(), c.Payload()
		return nil
	})
	c.Handle("hostile.v1.kept", "kept", func(c *sdk.Call) error {
		out, err := json.Marshal(kept)
		if err != nil {
			return err
		}
		c.Final(out)
		return nil
	})
	c.Handle("hostile.v1.ask", "ask", func(c *sdk.Call) error {
		var q struct{ Action, Resource string }
		if err := c.Decode(&q); err != nil {
			return err
		}
		approved, err := c.RequestApproval(q.Action, q.Resource)
		out, _ := json.Marshal(map[string]any{"approved": approved, "code": uint32(hostapi.CodeOf(err))})
		c.Final(out)
		return nil
	})
	c.Handle("hostile.v1.elicit", "elicit", func(c *sdk.Call) error {
		var q hostapi.ElicitRequest
		if err := c.Decode(&q); err != nil {
			return err
		}
		ans, err := c.Elicit(q)
		out, _ := json.Marshal(map[string]any{"answer": ans, "code": uint32(hostapi.CodeOf(err))})
		c.Final(out)
		return nil
	})
	c.Handle("hostile.v1.run", "run", func(c *sdk.Call) error {
		var q struct {
			Key string
			Req hostapi.ProcessRequest
		}
		if err := c.Decode(&q); err != nil {
			return err
		}
		if q.Key != "" {
			if err := c.SetCancelKey(q.Key); err != nil {
				return err
			}
		}
		res, err := c.ProcessRun(q.Req)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		out, _ := json.Marshal(map[string]any{"result": res, "code": uint32(hostapi.CodeOf(err)), "message": msg})
		c.Final(out)
		return nil
	})
	// bg drives a background process: Op "spawn" with Req, "logs" or
	// "kill" with ID; it answers what the host said and its error code.
	c.Handle("hostile.v1.bg", "bg", func(c *sdk.Call) error {
		var q struct {
			Op  string
			ID  string
			Req hostapi.ProcessSpawnRequest
		}
		if err := c.Decode(&q); err != nil {
			return err
		}
		var v any
		var err error
		switch q.Op {
		case "spawn":
			v, err = c.ProcessSpawn(q.Req)
		case "logs":
			v, err = c.ProcessLogs(q.ID)
		case "kill":
			v, err = c.ProcessKill(q.ID)
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		out, _ := json.Marshal(map[string]any{"answer": v, "code": uint32(hostapi.CodeOf(err)), "message": msg})
		c.Final(out)
		return nil
	})
	c.Handle("hostile.v1.print", "print", func(c *sdk.Call) error {
		fmt.Println("hello from the guest")
		fmt.Fprintln(os.Stderr, "complaint from the guest")
		c.Log(hostapi.LogWarn, "logged through the host")
		return nil
	})
	return c
}
