package main

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/capsulepack"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/internal/publisher"
	"github.com/astrid-go/astrid/internal/store"
)

func newKeyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "key",
		Short: "Your publisher keys, which sign the capsules you share",
		Long: `A publisher key is an ed25519 key sealed in $ASTRID_HOME's state database; its private half
never leaves it. ` + "`astrid capsule sign`" + ` signs archives with it, and the people who install them
trust its public half (` + "`astrid trust add`" + `). It is not the host's own key.`,
	}
	var name string
	gen := &cobra.Command{
		Use:   "generate",
		Short: "Create a publisher key and print its public key",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHomeStore(func(st *store.Store) error {
				pub, err := publisher.Generate(st, name)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), capsulepack.FormatKey(pub))
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: publisher key %s created (id %s); share the line above, which others add with: astrid trust add <your-name> %s\n",
					name, capsulepack.KeyID(pub), capsulepack.FormatKey(pub))
				return nil
			})
		},
	}
	gen.Flags().StringVar(&name, "name", publisher.DefaultKey, "name of the key (to keep more than one)")
	show := &cobra.Command{
		Use:   "show [name]",
		Short: "Print a publisher key's public key (default: the default key)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n := publisher.DefaultKey
			if len(args) == 1 {
				n = args[0]
			}
			return withHomeStore(func(st *store.Store) error {
				priv, err := publisher.Load(st, n)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), capsulepack.FormatKey(priv.Public().(ed25519.PublicKey)))
				return nil
			})
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List your publisher keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHomeStore(func(st *store.Store) error {
				names, err := publisher.Keys(st)
				if err != nil {
					return err
				}
				for _, n := range names {
					priv, err := publisher.Load(st, n)
					if err != nil {
						return err
					}
					pub := priv.Public().(ed25519.PublicKey)
					fmt.Fprintf(cmd.OutOrStdout(), "%s  %s  %s\n", n, capsulepack.KeyID(pub), capsulepack.FormatKey(pub))
				}
				return nil
			})
		},
	}
	cmd.AddCommand(gen, show, list)
	return cmd
}

func newTrustCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "The publishers whose signed capsules install without asking",
		Long: `The trust store holds other publishers' public keys, each under a name you choose. An
archive signed by a trusted key installs as theirs; one that is unsigned or signed by a key
not here is installed only when you confirm it (or pass --allow-unsigned); a signature that
does not match its archive is always refused.`,
	}
	add := &cobra.Command{
		Use:     "add <name> <ed25519:key>",
		Short:   "Trust a publisher's public key (as their astrid key show prints it)",
		Example: "  astrid trust add alice ed25519:6yG0...=",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := capsulepack.ParseKey(args[1])
			if err != nil {
				return err
			}
			return withHomeStore(func(st *store.Store) error {
				if err := publisher.NewTrust(st).Add(args[0], key); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: trusting publisher %s (key %s)\n", args[0], capsulepack.KeyID(key))
				return nil
			})
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the trusted publishers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHomeStore(func(st *store.Store) error {
				all, err := publisher.NewTrust(st).List()
				if err != nil {
					return err
				}
				if len(all) == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "astrid: no trusted publishers (add one with astrid trust add <name> <key>)")
				}
				for _, e := range all {
					fmt.Fprintf(cmd.OutOrStdout(), "%s  %s  %s\n", e.Name, capsulepack.KeyID(e.Key), capsulepack.FormatKey(e.Key))
				}
				return nil
			})
		},
	}
	var keep bool
	remove := &cobra.Command{
		Use:   "remove <name>",
		Short: "Stop trusting a publisher (and revoke the approval of what it signed)",
		Long: `remove takes the publisher's key out of the trust store: archives it signed are from an
unknown publisher from now on. The capsules installed from archives it signed lose their
approval too, so they no longer load (each is named, with how to approve it again);
--keep-installed leaves them approved.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			return withHomeStore(func(st *store.Store) error {
				tr := publisher.NewTrust(st)
				all, err := tr.List()
				if err != nil {
					return err
				}
				var key string
				for _, e := range all {
					if e.Name == args[0] {
						key = capsulepack.FormatKey(e.Key)
					}
				}
				if err := tr.Remove(args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: publisher %s is no longer trusted\n", args[0])
				if keep {
					return nil
				}
				return revokeSignedBy(cmd, home, st, args[0], key)
			})
		},
	}
	remove.Flags().BoolVar(&keep, "keep-installed", false, "leave the capsules it signed approved")
	cmd.AddCommand(add, list, remove)
	return cmd
}

// revokeSignedBy revokes the approval of every installed capsule whose
// archive key signed: it is refused at its next load, with the reason.
func revokeSignedBy(cmd *cobra.Command, home string, st *store.Store, name, key string) error {
	caps := config.Layout(home).Capsules
	entries, err := os.ReadDir(caps)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	book := grants.NewBook(st)
	for _, d := range entries {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		o, ok := readOrigin(filepath.Join(caps, d.Name()))
		if !ok || o.Key == "" || o.Key != key {
			continue
		}
		if err := book.Revoke(d.Name()); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: capsule %s was signed by %s: its approval is revoked, so it no longer loads (approve it again with astrid capsule approve %s, or install it from a trusted publisher)\n", d.Name(), name, d.Name())
	}
	return nil
}
