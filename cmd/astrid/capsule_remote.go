package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/capsuleoci"
	"github.com/astrid-go/astrid/internal/capsulepack"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

func init() {
	capsuleSubcommands = append(capsuleSubcommands, newCapsulePublishCmd)
	archiveFetchers = remoteFetcher
}

// registryNamespace holds `astrid registry login` credentials, sealed,
// by registry host (a hyphen first: no capsule id can name it).
const registryNamespace = "-registry"

// downloadTimeout bounds one registry or URL download, body included.
const downloadTimeout = 10 * time.Minute

// isLoopbackHost reports whether hostport names this machine literally
// (localhost or a loopback address): the one place an install may reach
// over plain HTTP, and only at the port named.
func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// allowLocal is what the egress guard lets through besides public
// addresses, on every hop (redirects and token servers included): the
// operator's [egress] allow entries and the loopback host:port the person
// named.
func allowLocal(home, named string) ([]string, error) {
	cfg, err := config.Load(config.Layout(home).Config)
	if err != nil {
		return nil, err
	}
	allow := append([]string(nil), cfg.Egress.Allow...)
	if isLoopbackHost(named) {
		allow = append(allow, named)
	}
	return allow, nil
}

// remoteHTTP is the egress client a URL download goes through.
func remoteHTTP(home, named string) (*http.Client, error) {
	allow, err := allowLocal(home, named)
	if err != nil {
		return nil, err
	}
	return egress.NewClient(egress.Options{
		AllowLocal: allow,
		CheckHost:  func(string) error { return nil },
		Timeout:    downloadTimeout,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

// registryCredential is what `astrid registry login` seals per host
// (capsuleoci.Credential's JSON).
type registryCredential = capsuleoci.Credential

// remoteFetcher fetches oci:// and http(s):// sources.
func remoteFetcher(src string) (archiveFetcher, bool) {
	switch {
	case strings.HasPrefix(src, ociScheme):
		return fetchOCI, true
	case strings.HasPrefix(src, "https://"), strings.HasPrefix(src, "http://"):
		return fetchURL, true
	}
	return nil, false
}

func fetchOCI(cmd *cobra.Command, e *installEnv, src string) ([]byte, string, error) {
	ref, err := capsuleoci.ParseRef(src)
	if err != nil {
		return nil, "", err
	}
	c, err := ociClient(e.home, e.st, ref.Registry)
	if err != nil {
		return nil, "", err
	}
	defer c.HTTP.CloseIdleConnections()
	f, err := c.Fetch(cmd.Context(), ref, maxArchiveBytes(e))
	if err != nil {
		return nil, "", ociError(err)
	}
	ref.Digest = f.Manifest.Digest
	fmt.Fprintf(cmd.ErrOrStderr(), "astrid: fetched %s (archive %d bytes)\n", ref, len(f.Archive))
	return f.Archive, ref.String(), nil
}

func fetchURL(cmd *cobra.Command, e *installEnv, src string) ([]byte, string, error) {
	b, err := download(cmd, e, src)
	return b, src, err
}

func download(cmd *cobra.Command, e *installEnv, src string) ([]byte, error) {
	u, err := url.Parse(src)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Host) {
		return nil, fmt.Errorf("%s: plain http is refused for a download from another machine; use https", src)
	}
	hc, err := remoteHTTP(e.home, u.Host)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, src, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download: %s", resp.Status)
	}
	limit := maxArchiveBytes(e)
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("download: %d bytes, past the %d-byte archive limit", resp.ContentLength, limit)
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(resp.Body, limit+1)); err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("download: past the %d-byte archive limit", limit)
	}
	return buf.Bytes(), nil
}

func maxArchiveBytes(e *installEnv) int64 {
	if e.opts.MaxBytes > 0 {
		return e.opts.MaxBytes
	}
	return capsulepack.DefaultMaxBytes
}

func newCapsulePublishCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "publish <file.capsule> oci://host/namespace/name:tag",
		Short: "Publish a capsule archive to an OCI registry",
		Long: `publish uploads the archive (from ` + "`astrid capsule pack`" + `, signed or not) to an OCI registry
as an artifact of type application/vnd.astrid.capsule.v1 with one layer, the archive, and tags it.
It prints the reference with the manifest's digest, which ` + "`astrid capsule install`" + ` takes to pin
exactly this upload. The archive is checked first, and a capsule whose [package] says
publish = false is refused.

Credentials come from ` + "`astrid registry login`" + `, then from the docker/OCI config you already have
($DOCKER_CONFIG or ~/.docker/config.json). A registry on localhost or a loopback address is
spoken to over plain HTTP; any other over HTTPS, through the same SSRF guard capsules get.`,
		Example: `  astrid capsule publish hello-0.1.0.capsule oci://localhost:5000/astrid/hello:0.1.0`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := readArchiveFile(args[0])
			if err != nil {
				return err
			}
			a, err := capsulepack.Read(bytes.NewReader(b), capsulepack.Limits{})
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			m, diags := manifest.Parse(a.Files[manifest.FileName], args[0]+"/"+manifest.FileName, "")
			if m == nil || diags.Err(false) != nil {
				return fmt.Errorf("%s: its Capsule.toml has errors: %w", args[0], diags.Err(false))
			}
			if m.Package.Publish != nil && !*m.Package.Publish {
				return fmt.Errorf("%s: [package] publish = false: capsule %s is not to be published", args[0], m.ID())
			}
			home, err := config.Home()
			if err != nil {
				return err
			}
			ref, err := capsuleoci.ParseRef(args[1])
			if err != nil {
				return err
			}
			return withHomeStore(func(st *store.Store) error {
				c, err := ociClient(home, st, ref.Registry)
				if err != nil {
					return err
				}
				defer c.HTTP.CloseIdleConnections()
				p, err := c.Push(cmd.Context(), ref, b, map[string]string{
					"org.opencontainers.image.title":   m.ID(),
					"org.opencontainers.image.version": m.Package.Version,
				})
				if err != nil {
					return ociError(err)
				}
				ref.Digest = p.Manifest.Digest
				fmt.Fprintln(cmd.OutOrStdout(), ref)
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: published %s %s (archive %s)\n", m.ID(), m.Package.Version, p.Layer.Digest)
				return nil
			})
		},
	}
	return cmd
}
