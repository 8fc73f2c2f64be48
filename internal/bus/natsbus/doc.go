// Package natsbus owns the NATS transport under dispatch (DESIGN §9): it
// carries envelopes the local bus admitted and stamped to the other hosts
// of a NATS cluster, and hands the envelopes they publish to the local
// dispatcher (dispatch.Dispatcher.DeliverRemote), which routes them and
// runs this host's interceptors. It also owns the topic ↔ subject mapping,
// the embedded nats-server, its in-process authenticator and the
// authentication of its routes to the other nodes (routeauth.go), and the
// hosts' presence: each host announces the capsules and interceptors it
// serves, which NATS cannot tell (Hosts, ExactInterceptors). NATS does the
// distribution: a capsule loaded on several hosts intercepts in a queue
// group those hosts share, and NATS hands each envelope to one of them
// (intercepts.go). A request published here (ipc.Envelope.IsRequest) that
// only other hosts handle travels as a NATS request; the host that takes it
// answers, and this host tracks it until its reply, reporting it to
// Options.RequestLost, which the kernel answers, once NATS answers "no
// responders" on that host's liveness subject or this host loses NATS
// (inflight.go). A reply runs the interceptors of the host that published
// its request, where the requester waits.
// It knows no topic's convention: a request is what its envelope says.
//
// Subjects carry the publisher: astrid.<capsule id>.<topic>. Each capsule
// has its own connection, whose broker permissions are derived from its
// manifest: publish only astrid.<its id>.<each [publish] key>, subscribe
// only astrid.*.<each [subscribe] key> (a trailing `.*` becomes `>`). The
// receiving host takes source_id and topic from the subject, never from
// the encoded envelope, so no connection can speak as another capsule. A
// message's body is the publishing host's id, the capsules that ran it
// there, and the envelope's compact binary form (ipc.Envelope.AppendBinary),
// which keeps every field; the subject supplies topic and source_id
// (codec.go).
//
// On the embedded server the in-process authenticator sets those
// permissions; on an external cluster in operator mode they are in each
// capsule's user JWT, minted by the operator (MintCapsuleCreds,
// MintHostCreds) and read per capsule from Options.CredsDir
// (creds_dir.go).
//
// A host receives through one more connection (receiver.go), allowed the
// union of its capsules' subscribe grants, whose route subscriptions share
// a queue group named by the host id: each envelope reaches each host's
// routes once and in its publisher's order, whatever number of the host's
// keys match.
//
// What it must not do: check ACLs or rate limits (dispatch did, on the
// publishing host; the broker checks the grants again), route, buffer or
// evict for subscribers (internal/bus does, per host), run interceptors, or
// carry the kernel's own events (each host's kernel speaks for itself).
// Every envelope it fails to carry or hand over is counted by reason
// (Stats.Drops) and logged, never dropped silently.
package natsbus
