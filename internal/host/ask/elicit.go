package ask

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// DefaultElicitWindow is how long an elicit question waits for an answer:
// longer than an approval's, since a person may have to look a value (an
// API key) up first.
const DefaultElicitWindow = 5 * time.Minute

// Elicits is the kernel-wide state of the host elicit call.
type Elicits struct {
	// frontends are the source ids whose answers count: the kernel's
	// frontends (reserved against capsule ids), never a capsule that was
	// merely granted the response topics.
	frontends []string
	window    time.Duration
}

// NewElicits returns the elicit state: answers count from frontends; a
// question waits window (DefaultElicitWindow when 0).
func NewElicits(frontends []string, window time.Duration) *Elicits {
	if window <= 0 {
		window = DefaultElicitWindow
	}
	return &Elicits{frontends: slices.Clone(frontends), window: window}
}

// Ask is the host elicit call (hostapi.Elicit) for s: q checked and asked
// of the person through a frontend, whose answer must fit it. A question
// asked inside a tool call tells whoever times that call that it waits
// (ipc.ElicitPendingTopic) and when it no longer does.
func (e *Elicits) Ask(s Asker, q hostapi.ElicitRequest) (hostapi.ElicitAnswer, error) {
	const op = "elicit"
	field, form, err := elicitQuestion(q)
	if err != nil {
		return hostapi.ElicitAnswer{}, err
	}
	id, err := newRequestID()
	if err != nil {
		return hostapi.ElicitAnswer{}, hostapi.Errorf(hostapi.CodeInternal, op, "request id: %v", err)
	}
	payload, err := ipc.ElicitRequest{RequestID: id, CapsuleID: s.Capsule, Field: field, CallID: s.CallID, Form: form}.MarshalJSON()
	if err != nil {
		return hostapi.ElicitAnswer{}, hostapi.Errorf(hostapi.CodeInternal, op, "question: %v", err)
	}
	var ans ipc.ElicitResponse
	asked := false
	defer func() {
		if asked {
			s.noticeElicit(ipc.ElicitSettledTopic, id)
		}
	}()
	err = s.ask(question{
		op: op, id: id, topic: ipc.ElicitRequestTopic, payload: payload, answers: ipc.ElicitResponseTopic(id),
		trusted: e.frontends, window: e.window,
		asked: func() {
			asked = true
			s.noticeElicit(ipc.ElicitPendingTopic, id)
		},
		take: func(p []byte) bool {
			var r ipc.ElicitResponse
			// Neither the answer nor the decoder's error (which may
			// quote it) is logged: it may be a secret.
			if r.UnmarshalJSON(p) != nil || r.RequestID != id {
				s.Log.Warn("elicit: ignored an answer that is not this question's", "request_id", id)
				return false
			}
			if err := checkAnswer(field, form, r); err != nil {
				s.Log.Warn("elicit: ignored an answer that does not fit the question", "request_id", id, "key", field.Key, "problem", err.Error())
				return false
			}
			ans = r
			return true
		},
	})
	if err != nil {
		return hostapi.ElicitAnswer{}, err
	}
	if ans.Cancelled() {
		return hostapi.ElicitAnswer{}, hostapi.Errorf(hostapi.CodeDeclined, op, "the person declined to give %s", field.Key)
	}
	if form != nil {
		return hostapi.ElicitAnswer{Content: ans.Content}, nil
	}
	if ans.Value != nil {
		return hostapi.ElicitAnswer{Value: *ans.Value}, nil
	}
	return hostapi.ElicitAnswer{Values: ans.Values}, nil
}

// noticeElicit tells whoever times the tool call s.CallID (the agent loop)
// that question id holds it up (ipc.ElicitPendingTopic) or no longer does
// (ipc.ElicitSettledTopic). A question outside a tool call has no one to
// tell. A notice that cannot be published is logged: the call goes on, its
// clock merely not paused.
func (s Asker) noticeElicit(topic, id string) {
	if s.CallID == "" {
		return
	}
	payload, err := json.Marshal(ipc.ElicitNotice{RequestID: id, CallID: s.CallID})
	if err == nil {
		_, err = s.Dispatcher.Publish(dispatch.Caller{Principal: s.Principal}, topic, payload, dispatch.KernelEvent)
	}
	if err != nil {
		s.Log.Warn("elicit: notice not published", "topic", topic, "request_id", id, "error", err)
	}
}

// elicitQuestion checks a question and writes it as the wire's field and,
// for a form, its checked schema (ipc.ParseElicitSchema); the field then
// names the form (its key, its message as the prompt).
func elicitQuestion(q hostapi.ElicitRequest) (ipc.OnboardingField, *ipc.ElicitForm, error) {
	if q.Kind != hostapi.ElicitForm {
		if q.Schema != nil {
			return ipc.OnboardingField{}, nil, hostapi.Errorf(hostapi.CodeInvalid, "elicit", "only a form has a schema")
		}
		f, err := elicitField(q)
		return f, nil, err
	}
	if q.Default != nil || len(q.Options) > 0 {
		return ipc.OnboardingField{}, nil, hostapi.Errorf(hostapi.CodeInvalid, "elicit", "a form's options and defaults are its schema's")
	}
	schema, err := ipc.ParseElicitSchema(q.Schema)
	if err != nil {
		return ipc.OnboardingField{}, nil, hostapi.Errorf(hostapi.CodeInvalid, "elicit", "%v", err)
	}
	text := q
	text.Kind, text.Schema = hostapi.ElicitText, nil
	f, err := elicitField(text)
	if err != nil {
		return ipc.OnboardingField{}, nil, err
	}
	return f, &ipc.ElicitForm{Schema: schema}, nil
}

// checkAnswer reports why r cannot answer the question: a form's content
// must fit its schema, a field's value the field.
func checkAnswer(f ipc.OnboardingField, form *ipc.ElicitForm, r ipc.ElicitResponse) error {
	if form == nil {
		return f.CheckAnswer(r)
	}
	if r.Cancelled() {
		return nil
	}
	if r.Value != nil || r.Values != nil {
		return fmt.Errorf("a form is answered with content, not a value")
	}
	return form.Schema.CheckContent(r.Content)
}

// elicitField checks a question and writes it as the wire's field: shown
// text without control characters, sizes bounded, a select's options and
// default consistent, and no default for a secret (it would travel in the
// question, which every frontend of the principal hears).
func elicitField(q hostapi.ElicitRequest) (ipc.OnboardingField, error) {
	const op = "elicit"
	if q.Key == "" || len(q.Key) > hostapi.MaxElicitKey || strings.ContainsFunc(q.Key, func(r rune) bool {
		return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.'))
	}) {
		return ipc.OnboardingField{}, hostapi.Errorf(hostapi.CodeInvalid, op, "a key is 1 to %d ASCII letters, digits, '_', '-' or '.'", hostapi.MaxElicitKey)
	}
	var kind ipc.FieldKind
	switch q.Kind {
	case hostapi.ElicitText:
		kind = ipc.FieldText
	case hostapi.ElicitSecret:
		kind = ipc.FieldSecret
	case hostapi.ElicitSelect:
		kind = ipc.FieldEnum
	case hostapi.ElicitArray:
		kind = ipc.FieldArray
	default:
		return ipc.OnboardingField{}, hostapi.Errorf(hostapi.CodeInvalid, op, "kind %q: want text, secret, select or array", q.Kind)
	}
	prompt, err := shownText("prompt", q.Prompt)
	if err != nil {
		return ipc.OnboardingField{}, err
	}
	if prompt == "" {
		prompt = q.Key
	}
	f := ipc.OnboardingField{Key: q.Key, Prompt: prompt, FieldType: ipc.FieldType{Kind: kind}}
	if q.Description != "" {
		d, err := shownText("description", q.Description)
		if err != nil {
			return ipc.OnboardingField{}, err
		}
		f.Description = &d
	}
	if kind == ipc.FieldEnum {
		if len(q.Options) == 0 || len(q.Options) > hostapi.MaxElicitOptions {
			return ipc.OnboardingField{}, hostapi.Errorf(hostapi.CodeInvalid, op, "a select has 1 to %d options, not %d", hostapi.MaxElicitOptions, len(q.Options))
		}
		for i, o := range q.Options {
			if o == "" || len(o) > hostapi.MaxElicitOption || !utf8.ValidString(o) || strings.ContainsFunc(o, unicode.IsControl) {
				return ipc.OnboardingField{}, hostapi.Errorf(hostapi.CodeInvalid, op, "option %d is not 1 to %d bytes of text without control characters", i, hostapi.MaxElicitOption)
			}
			if slices.Contains(q.Options[:i], o) {
				return ipc.OnboardingField{}, hostapi.Errorf(hostapi.CodeInvalid, op, "option %q is listed twice", o)
			}
		}
		f.FieldType.Options = slices.Clone(q.Options)
	} else if len(q.Options) > 0 {
		return ipc.OnboardingField{}, hostapi.Errorf(hostapi.CodeInvalid, op, "only a select has options")
	}
	if q.Default != nil {
		switch {
		case kind == ipc.FieldSecret:
			return ipc.OnboardingField{}, hostapi.Errorf(hostapi.CodeInvalid, op, "a secret has no default")
		case kind == ipc.FieldEnum && !slices.Contains(f.FieldType.Options, *q.Default):
			return ipc.OnboardingField{}, hostapi.Errorf(hostapi.CodeInvalid, op, "the default is not one of the options")
		}
		d, err := shownText("default", *q.Default)
		if err != nil {
			return ipc.OnboardingField{}, err
		}
		f.Default = &d
	}
	return f, nil
}

// shownText is s as a question shows it: control characters removed,
// trimmed, at most MaxElicitPrompt bytes.
func shownText(what, s string) (string, error) {
	if len(s) > hostapi.MaxElicitPrompt {
		return "", hostapi.Errorf(hostapi.CodeTooLarge, "elicit", "the %s holds %d bytes, more than %d", what, len(s), hostapi.MaxElicitPrompt)
	}
	if !utf8.ValidString(s) {
		return "", hostapi.Errorf(hostapi.CodeInvalid, "elicit", "the %s is not UTF-8", what)
	}
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)), nil
}
