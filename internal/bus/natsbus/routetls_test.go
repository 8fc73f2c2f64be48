package natsbus

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA signs route certificates for 127.0.0.1.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{cert: cert, key: key, file: filepath.Join(t.TempDir(), "ca.pem")}
	writePEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

// node issues a certificate for a node on 127.0.0.1, good as a server's
// and as a client's, as a route's two ends need.
func (ca *testCA) node(t *testing.T, name string) ClusterTLS {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := ClusterTLS{Cert: filepath.Join(dir, "node.pem"), Key: filepath.Join(dir, "node.key"), CA: ca.file}
	writePEM(t, c.Cert, "CERTIFICATE", der)
	writePEM(t, c.Key, "EC PRIVATE KEY", keyDER)
	return c
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// handshakeRefusals is how many route TLS handshakes the nodes failed.
func (l *serverLogs) handshakeRefusals() int {
	return strings.Count(l.String(), "TLS route handshake error")
}

// TestRouteTLSKeepsOtherCertificatesOut: two nodes whose certificates the
// operator's CA signed route to each other over TLS and carry envelopes; a
// node presenting a certificate of another CA, or speaking plain TCP, is
// refused, and nothing crosses either way.
func TestRouteTLSKeepsOtherCertificatesOut(t *testing.T) {
	ca := newTestCA(t, "operator")
	var logs serverLogs
	// Both nodes present the same certificate: each checks only that
	// the operator's CA signed the peer's.
	nodes, hosts := securedPair(t, ServerOptions{ClusterTLS: ca.node(t, "node")}, &logs)
	seed := "nats-route://" + nodes[0].ClusterAddr().String()
	// The rogue trusts the operator's CA (its certificate is no secret),
	// so it accepts node 0's; node 0 must refuse the rogue's.
	forged := newTestCA(t, "operator").node(t, "node")
	forged.CA = ca.file
	rogues := []struct {
		name  string
		start func(t *testing.T) rogueNode
	}{
		{"a certificate of another CA", func(t *testing.T) rogueNode { return astridRogue(t, seed, ServerOptions{ClusterTLS: forged}) }},
		{"no TLS", func(t *testing.T) rogueNode { return rawRogue(t, seed) }},
	}
	for _, rc := range rogues {
		t.Run(rc.name, func(t *testing.T) {
			before := logs.handshakeRefusals()
			r := rc.start(t)
			keptOut(t, nodes, hosts, r, func() bool { return logs.handshakeRefusals() >= before+3 })
		})
	}
}

// TestRouteTLSNeedsAllThreeFiles: a certificate without the CA that checks
// the peers' would encrypt without authenticating; it is refused.
func TestRouteTLSNeedsAllThreeFiles(t *testing.T) {
	c := newTestCA(t, "operator").node(t, "node")
	c.CA = ""
	_, err := StartServer(ServerOptions{ClusterName: "test", ClusterListen: "127.0.0.1:0", ClusterTLS: c}, NewAuthenticator(nil))
	if err == nil || !strings.Contains(err.Error(), "CA") {
		t.Fatalf("StartServer = %v", err)
	}
}
