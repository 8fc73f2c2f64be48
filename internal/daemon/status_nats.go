package daemon

import (
	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/kernel"
)

// NATSStatus is the bus across hosts as this daemon sees it (docs/nats.md).
type NATSStatus struct {
	// Host is this daemon's host id.
	Host string `json:"host"`
	// Hosts are the hosts of the bus with the capsules each serves,
	// this one included.
	Hosts []natsbus.HostInfo `json:"hosts"`
	Stats natsbus.Stats      `json:"stats"`
}

// natsStatus is k's NATS status, nil when its bus stays on this host.
func natsStatus(k *kernel.Kernel) *NATSStatus {
	tr := k.NATSTransport()
	if tr == nil {
		return nil
	}
	return &NATSStatus{Host: tr.HostID(), Hosts: tr.Hosts(), Stats: tr.Stats()}
}
