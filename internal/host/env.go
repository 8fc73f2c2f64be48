package host

import (
	"fmt"
	"strings"
	"sync"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// [env] values per principal (seed 003): a principal's own value of a key
// comes first, the capsule-wide value (the operator's, or the manifest's
// preset) is the shared fallback. A required key that has neither is put
// to the calling principal as the onboarding question: published on
// ipc.OnboardingTopic for whoever shows it, and asked through the elicit
// path, which the principal's frontends answer (a terminal asks; with no
// frontend listening it is refused at once). The answer is kept as the
// principal's own value.

// envAsks is how often one onboarding question is put again after an
// answer its type refused.
const envAsks = 3

// onboarding coalesces the questions for one (principal, key): calls that
// need the same value while it is being asked wait for that answer.
type onboarding struct {
	mu      sync.Mutex
	flights map[string]*envFlight
}

type envFlight struct {
	done  chan struct{}
	value string
	ok    bool
}

// principalValue is the calling principal's own value of a declared [env]
// key, read from the store each time (a value kept by an answer or by
// `astrid capsule env set --principal` counts at once).
func (call *Call) principalValue(key string) (string, bool) {
	st := call.c.deps.Store
	if st == nil || call.principal == "" {
		return "", false
	}
	if _, declared := call.c.env[key]; !declared {
		return "", false
	}
	var v []byte
	var ok bool
	var err error
	if call.c.secrets[key] {
		v, ok, err = st.PrincipalSecrets(call.principal, call.c.id).Get(key)
	} else {
		v, ok, err = st.PrincipalConfig(call.principal, call.c.id).Get(key)
	}
	if err != nil {
		call.c.log.Warn("a principal's [env] value cannot be read", "principal", call.principal, "key", key, "err", err)
		return "", false
	}
	return string(v), ok
}

// onboard asks the calling principal for required key e, which has no
// value at all, once for all calls that need it at the same time.
func (call *Call) onboard(e manifest.EnvVar) (string, bool) {
	o := &call.c.onboarding
	name := call.principal + "\x00" + e.Key
	o.mu.Lock()
	if f := o.flights[name]; f != nil {
		o.mu.Unlock()
		select {
		case <-f.done:
			return f.value, f.ok
		case <-call.ctx.Done():
			return "", false
		}
	}
	if o.flights == nil {
		o.flights = map[string]*envFlight{}
	}
	f := &envFlight{done: make(chan struct{})}
	o.flights[name] = f
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		delete(o.flights, name)
		o.mu.Unlock()
		close(f.done)
	}()
	f.value, f.ok = call.askEnv(e)
	return f.value, f.ok
}

// askEnv publishes the onboarding request and asks for e's value, again
// when its type refuses an answer; a value given is kept as the
// principal's own.
func (call *Call) askEnv(e manifest.EnvVar) (string, bool) {
	howToSet := fmt.Sprintf("astrid capsule env set --principal %s %s %s", call.principal, call.c.id, e.Key)
	refuse := func(why error) (string, bool) {
		call.c.log.Warn("a required [env] value is missing", "principal", call.principal, "key", e.Key, "err", why, "set_it_with", howToSet)
		return "", false
	}
	deps := call.c.deps
	if deps.Elicits == nil || deps.Bus == nil || deps.Store == nil || deps.Dispatcher == nil {
		return refuse(fmt.Errorf("[env] %s has no value and this kernel cannot ask for one", e.Key))
	}
	q := envQuestion(call.c.id, e)
	call.publishOnboarding(e)
	for attempt := 1; ; attempt++ {
		ans, err := deps.Elicits.Ask(call.asker(), q)
		if err != nil {
			return refuse(fmt.Errorf("[env] %s: %w", e.Key, err))
		}
		v := ans.Value
		if e.Type == manifest.EnvArray {
			v = strings.Join(ans.Values, ",")
		}
		if err := e.Check(v); err != nil {
			if attempt == envAsks {
				return refuse(fmt.Errorf("[env] %s: %w", e.Key, err))
			}
			q.Description = fmt.Sprintf("%v; try again. %s", err, envDescription(call.c.id, e))
			continue
		}
		if err := deps.Store.SetPrincipalEnv(call.principal, call.c.id, e.Key, e.Type == manifest.EnvSecret, []byte(v)); err != nil {
			// The value still serves this call; the next asks again.
			call.c.log.Warn("an onboarding answer was not kept", "principal", call.principal, "key", e.Key, "err", err)
		}
		return v, true
	}
}

// publishOnboarding tells the principal's frontends which value the
// capsule waits for (ipc.OnboardingTopic), so that one that cannot ask
// (the web view) shows it pending. Best effort: the question itself goes
// through the elicit path.
func (call *Call) publishOnboarding(e manifest.EnvVar) {
	f := envField(call.c.id, e)
	payload, err := ipc.OnboardingRequired{CapsuleID: call.c.id, Fields: []ipc.OnboardingField{f}}.MarshalJSON()
	if err == nil {
		_, err = call.c.deps.Dispatcher.Publish(dispatch.Caller{Principal: call.principal}, ipc.OnboardingTopic, payload, dispatch.KernelEvent)
	}
	if err != nil {
		call.c.log.Warn("onboarding request not published", "principal", call.principal, "key", e.Key, "err", err)
	}
}

// envQuestion is e asked through the elicit path.
func envQuestion(id string, e manifest.EnvVar) hostapi.ElicitRequest {
	q := hostapi.ElicitRequest{Key: e.Key, Kind: hostapi.ElicitText, Prompt: e.Request, Description: envDescription(id, e)}
	if q.Prompt == "" {
		q.Prompt = "Value of " + e.Key
	}
	switch {
	case e.Type == manifest.EnvSecret:
		q.Kind = hostapi.ElicitSecret
	case e.Type == manifest.EnvSelect && len(e.EnumValues) > 0:
		q.Kind, q.Options = hostapi.ElicitSelect, e.EnumValues
	case e.Type == manifest.EnvArray:
		q.Kind = hostapi.ElicitArray
	}
	return q
}

func envDescription(id string, e manifest.EnvVar) string {
	d := fmt.Sprintf("Capsule '%s' needs [env] %s; your answer is kept for you alone.", id, e.Key)
	if e.Description != "" {
		d = e.Description + " " + d
	}
	return d
}

// envField is e as the onboarding request lists it.
func envField(id string, e manifest.EnvVar) ipc.OnboardingField {
	q := envQuestion(id, e)
	f := ipc.OnboardingField{Key: e.Key, Prompt: q.Prompt, FieldType: ipc.FieldType{Kind: ipc.FieldText}}
	d := q.Description
	f.Description = &d
	switch q.Kind {
	case hostapi.ElicitSecret:
		f.FieldType.Kind = ipc.FieldSecret
	case hostapi.ElicitSelect:
		f.FieldType = ipc.FieldType{Kind: ipc.FieldEnum, Options: q.Options}
	case hostapi.ElicitArray:
		f.FieldType.Kind = ipc.FieldArray
	}
	return f
}
