package main

import "github.com/spf13/cobra"

// newMCPCmd is `astrid mcp`: Astrid and the Model Context Protocol.
func newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Astrid and the Model Context Protocol: serve Astrid's tools to MCP clients, log in to remote MCP servers",
	}
	cmd.AddCommand(newMCPServeCmd(), newMCPLoginCmd(), newMCPLogoutCmd())
	return cmd
}
