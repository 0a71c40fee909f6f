package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/msgbench/msgbench/internal/version"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "msgbench",
		Short:         "Benchmark IoT messaging protocols on emulated networks, locally or on Kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCommand(), newLoadgenCommand(), newGatewayCommand(), newUsageCommand(), newOperatorCommand(), newRenderCommand(),
		newRunCommand(), newReportCommand(), newNetemCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the msgbench version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), version.String())
			return err
		},
	}
}
