package sdk

import (
	"errors"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
)

func TestErrorRecord(t *testing.T) {
	err := hostapi.Errorf(hostapi.CodeDenied, "publish", "topic x: denied by ACL")
	got := decodeError(appendError(nil, err))
	if got.Code != hostapi.CodeDenied || got.Error() != err.Error() {
		t.Errorf("decoded %+v (%q), want code denied and text %q", got, got.Error(), err.Error())
	}
	if !errors.Is(got, hostapi.ErrDenied) {
		t.Error("a decoded error does not match its sentinel")
	}
	if decodeError(appendError(nil, errors.New("plain"))).Code != hostapi.CodeInternal {
		t.Error("an error without a code must cross as internal")
	}
	if decodeError([]byte{1}).Code != hostapi.CodeInternal {
		t.Error("a malformed record must decode as internal")
	}
}
