package sdk

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// RoundTrip sends req on topic as a request answered on replyTopic with
// correlation id corr, and returns the payload of the first answer sent by
// one of from (the capsules that intercept topic: the kernel stamps the
// source, so no other capsule can answer in their name), waiting at most
// wait; the kernel's answer when none of them gives one is a
// RequestFailedError that says why. It subscribes before publishing, so no
// answer is lost, and unsubscribes before it returns. who names the other
// party in errors. h is a capsule's Call or any other host of a call.
func RoundTrip(h hostapi.Host, topic, replyTopic, corr string, req []byte, from []string, wait time.Duration, who string) ([]byte, error) {
	return RoundTripFrom(h, topic, replyTopic, corr, req, func(source string) bool { return slices.Contains(from, source) }, wait, who)
}

// RoundTripFrom is RoundTrip for answerers not known by name beforehand:
// the first answer whose source from accepts is returned.
func RoundTripFrom(h hostapi.Host, topic, replyTopic, corr string, req []byte, from func(source string) bool, wait time.Duration, who string) ([]byte, error) {
	sub, err := h.Subscribe(replyTopic)
	if err != nil {
		return nil, err
	}
	defer func() { _ = h.Unsubscribe(sub) }()
	if err := h.PublishRequest(topic, req, hostapi.Request{ReplyTo: replyTopic, CorrelationID: corr, Timeout: wait}); err != nil {
		return nil, fmt.Errorf("asking the %s: %w", who, err)
	}
	deadline := h.Now().Add(wait)
	for {
		left := deadline.Sub(h.Now())
		if left <= 0 {
			return nil, fmt.Errorf("the %s did not answer within %s", who, wait)
		}
		msg, err := h.Recv(sub, left)
		if errors.Is(err, hostapi.ErrTimeout) {
			return nil, fmt.Errorf("the %s did not answer within %s", who, wait)
		}
		if err != nil {
			return nil, fmt.Errorf("waiting for the %s: %w", who, err)
		}
		if from(msg.SourceID) {
			return msg.Payload, nil
		}
		if f, ok := ipc.AsRequestFailed(msg.Payload); ok && msg.SourceID == ipc.KernelSourceID && f.CorrelationID == corr {
			return nil, RequestFailedError{Failed: f, Text: ipc.FailureText(f, "the request to the "+who)}
		}
	}
}

// RequestFailedError is the kernel's answer to a request none of its
// handlers answered, kept whole so that a caller can tell "nothing ran"
// apart.
type RequestFailedError struct {
	Failed ipc.RequestFailed
	Text   string
}

func (e RequestFailedError) Error() string { return e.Text }
