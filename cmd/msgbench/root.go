package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/msgbench/msgbench/internal/fleetlimits"
	"github.com/msgbench/msgbench/internal/version"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "msgbench",
		Short:         "Benchmark IoT messaging protocols on emulated networks, locally or on Kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Soft open-files limit up to the hard one, set with setrlimit so that the processes
		// msgbench starts (a local run's broker, worker processes) inherit it: Go raises its own
		// limit but gives its children the original one back (internal/fleetlimits).
		PersistentPreRun: func(*cobra.Command, []string) { _, _ = fleetlimits.Raise() },
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
