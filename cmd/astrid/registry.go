package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/store"
)

func newRegistryCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "Credentials for OCI registries (capsule publish and install)",
		Long: `Credentials given to ` + "`astrid registry login`" + ` are sealed in $ASTRID_HOME's state database and
tried first; then the docker/OCI config you already have ($DOCKER_CONFIG or
~/.docker/config.json, with its credential helpers), so ` + "`docker login`" + ` works too.`,
	}
	var user string
	var passwordStdin bool
	login := &cobra.Command{
		Use:     "login <host[:port]>",
		Short:   "Check a registry credential and keep it sealed",
		Example: `  echo "$TOKEN" | astrid registry login ghcr.io -u ada --password-stdin`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if user == "" || !passwordStdin {
				return errors.New("registry login: give -u <user> and the password on standard input with --password-stdin (it is never taken as an argument, where ps and shell history see it)")
			}
			pass, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
			if err != nil && pass == "" {
				return fmt.Errorf("registry login: read the password: %w", err)
			}
			pass = strings.TrimRight(pass, "\r\n")
			home, err := config.Home()
			if err != nil {
				return err
			}
			host := args[0]
			return withHomeStore(func(st *store.Store) error {
				c, err := ociClient(home, st, host)
				if err != nil {
					return err
				}
				defer c.HTTP.CloseIdleConnections()
				if err := c.Login(cmd.Context(), host, registryCredential{Username: user, Password: pass}, st.Secrets(registryNamespace)); err != nil {
					return ociError(err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: logged in to %s as %s (the credential is sealed in %s)\n", host, user, config.Layout(home).State)
				return nil
			})
		},
	}
	login.Flags().StringVarP(&user, "username", "u", "", "user name")
	login.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password (or token) from standard input")
	logout := &cobra.Command{
		Use:   "logout <host[:port]>",
		Short: "Forget a registry credential given to registry login",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHomeStore(func(st *store.Store) error {
				sec := st.Secrets(registryNamespace)
				if _, ok, err := sec.Get(args[0]); err != nil || !ok {
					if err != nil {
						return err
					}
					return fmt.Errorf("registry logout: no credential for %s", args[0])
				}
				return sec.Delete(args[0])
			})
		},
	}
	cmd.AddCommand(login, logout)
	return cmd
}
