package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/toolclient"
)

// The approval capsule cannot import the frontends' ids, so its default
// list of approvers spells them: both of astrid's frontends that ask
// questions must be on it, or a person's answer would be ignored.
func TestTheApprovalLayerHearsAstridsFrontends(t *testing.T) {
	ids := strings.Split(approval.DefaultApprovers, ",")
	for _, id := range []string{toolclient.ClientID, agentclient.ClientID} {
		if !slices.Contains(ids, id) {
			t.Errorf("approval.DefaultApprovers %q lacks frontend %s", approval.DefaultApprovers, id)
		}
	}
}
