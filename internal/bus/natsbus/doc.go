// Package natsbus owns the NATS transport under dispatch (DESIGN §9): it
// carries envelopes the local bus admitted and stamped to the other hosts
// of a NATS cluster, and hands the envelopes they publish to the local
// dispatcher (dispatch.Dispatcher.DeliverRemote), which routes them and
// runs this host's interceptors. It also owns the topic ↔ subject mapping,
// the embedded nats-server, its in-process authenticator and the
// authentication of its routes to the other nodes (routeauth.go), the hosts'
// presence (each host announces the capsules it serves; Hosts), and the
// choice of the one host on which a capsule loaded on several intercepts
// each envelope (elect.go). It tracks the requests published here
// (ipc.Envelope.IsRequest) that only other hosts handle and reports those
// whose host is lost (the host left, its node shut down, this host's node
// lost its routes to that node, it fell silent, or this host lost NATS) to
// Options.RequestLost, which the kernel answers (inflight.go, nodes.go,
// routes.go); and, from those requests, which host intercepts a reply: the
// one that published its request, where the requester waits (results.go).
// It knows no topic's convention: a request is what its envelope says.
//
// Subjects carry the publisher: astrid.<capsule id>.<topic>. Each capsule
// has its own connection, whose broker permissions are derived from its
// manifest: publish only astrid.<its id>.<each [publish] key>, subscribe
// only astrid.*.<each [subscribe] key> (a trailing `.*` becomes `>`). The
// receiving host takes source_id and topic from the subject, never from
// the encoded envelope, so no connection can speak as another capsule. A
// message's body is the publishing host's id and the envelope's compact
// binary form (ipc.Envelope.AppendBinary), which keeps every field; the
// subject supplies topic and source_id (codec.go).
//
// On the embedded server the in-process authenticator sets those
// permissions; on an external cluster in operator mode they are in each
// capsule's user JWT, minted by the operator (MintCapsuleCreds,
// MintHostCreds) and read per capsule from Options.CredsDir
// (creds_dir.go).
//
// A host receives through one more connection (receiver.go), allowed the
// union of its capsules' subscribe grants, whose subscriptions share a
// queue group named by the host id: each envelope reaches each host once
// and in its publisher's order, whatever number of the host's keys match.
//
// What it must not do: check ACLs or rate limits (dispatch did, on the
// publishing host; the broker checks the grants again), route, buffer or
// evict for subscribers (internal/bus does, per host), run interceptors, or
// carry the kernel's own events (each host's kernel speaks for itself).
// Every envelope it fails to carry or hand over is counted by reason
// (Stats.Drops) and logged, never dropped silently.
package natsbus
