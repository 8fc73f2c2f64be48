package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestIngressByPrincipal(t *testing.T) {
	got, err := Uplink{Ingress: []string{"guest=user.v1.prompt", " guest = astrid.v1.approval.response.* ", "ci=tool.v1.request.execute"}}.IngressByPrincipal()
	want := map[string][]string{"guest": {"user.v1.prompt", "astrid.v1.approval.response.*"}, "ci": {"tool.v1.request.execute"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("IngressByPrincipal = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{
		"user.v1.prompt",         // no principal
		"=user.v1.prompt",        // the empty (system) principal
		"al ice=user.v1.prompt",  // not a principal id
		"guest=",                 // no pattern
		"guest=user..prompt",     // an empty segment
		"guest=$SYS.v1.x",        // a reserved prefix
		"guest=user.v1.prompt.>", // a NATS wildcard
		strings.Repeat("p", 65) + "=user.v1.prompt",
	} {
		if _, err := (Uplink{Ingress: []string{bad}}).IngressByPrincipal(); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
