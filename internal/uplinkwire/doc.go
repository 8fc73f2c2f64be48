// Package uplinkwire owns the wire format of the daemon's socket (DESIGN §8,
// docs/uplink.md): the frames, the ops, the error codes and the limits, as
// both ends share them (capsules/uplink serves them, internal/daemonclient
// speaks them).
//
// It is a leaf helper: it imports only the standard library and must not
// act on a frame (publish, subscribe, dial); that is the two ends' business.
package uplinkwire
