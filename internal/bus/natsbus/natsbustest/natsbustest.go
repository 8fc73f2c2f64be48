// Package natsbustest holds what the NATS tests share in natsbus and in
// internal/kernel: a nats-server in decentralized (operator) mode, as an
// operator runs an external cluster. It is imported only from _test.go
// files.
package natsbustest

import (
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// readyWithin turns a server that never starts into a failure.
const readyWithin = 30 * time.Second

// OperatorServer starts a nats-server on a loopback port that trusts a fresh
// operator's JWT and knows one account, signed by that operator. It returns
// the server and the account's key, which mints every host's and capsule's
// credentials (natsbus.MintCapsuleCreds, natsbus.MintHostCreds). The server
// shuts down when the test ends.
func OperatorServer(t testing.TB) (*server.Server, nkeys.KeyPair) {
	t.Helper()
	op, _ := nkeys.CreateOperator()
	opPub, _ := op.PublicKey()
	opClaims := jwt.NewOperatorClaims(opPub)
	opClaims.Name = "astrid-operator"
	opJWT, err := opClaims.Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	opDecoded, err := jwt.DecodeOperatorClaims(opJWT)
	if err != nil {
		t.Fatal(err)
	}
	acc, _ := nkeys.CreateAccount()
	accPub, _ := acc.PublicKey()
	accClaims := jwt.NewAccountClaims(accPub)
	accClaims.Name = "astrid"
	accJWT, err := accClaims.Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	resolver := &server.MemAccResolver{}
	if err := resolver.Store(accPub, accJWT); err != nil {
		t.Fatal(err)
	}
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true,
		TrustedOperators: []*jwt.OperatorClaims{opDecoded}, AccountResolver: resolver})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(readyWithin) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns, acc
}
