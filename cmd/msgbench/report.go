package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/report"
)

func newReportCommand() *cobra.Command {
	var out string
	var images bool
	cmd := &cobra.Command{
		Use:   "report DIR|FILE… [--out DIR]",
		Short: "Compare result files side by side: a table and charts, as HTML and PNG/SVG images",
		Long: `Reads result.json files (or folders holding them, searched recursively) and writes a comparison
page with the figures the reference studies compare: messages handled per protocol and QoS as
clients grow, throughput by payload size and threads, bytes on the wire per message, connect and
first-message latency by round-trip time. With --images every chart is also written as PNG and
SVG for papers.`,
		Example: `  msgbench report results/ --out comparison
  msgbench report results/mqtt-qos0 results/mqtt-qos1 results/mqtt-qos2 --out qos --images`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var files []string
			for _, a := range args {
				fs, err := resultFiles(a)
				if err != nil {
					return err
				}
				files = append(files, fs...)
			}
			if len(files) == 0 {
				return fmt.Errorf("no result.json under %v", args)
			}
			var rs []*results.Result
			for _, f := range files {
				r, err := results.ReadFile(f)
				if err != nil {
					return err
				}
				rs = append(rs, r)
			}
			sort.SliceStable(rs, func(a, b int) bool { return rs[a].Name < rs[b].Name })
			written, err := report.WriteFiles(out, rs, images)
			if err != nil {
				return err
			}
			for _, w := range written {
				fmt.Fprintln(cmd.OutOrStdout(), w)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "report", "folder to write report.html (and images) to")
	cmd.Flags().BoolVar(&images, "images", false, "also write every chart as PNG and SVG")
	return cmd
}

// resultFiles is path itself when it is a file, or every result.json below it.
func resultFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "result.json" {
			out = append(out, p)
		}
		return err
	})
	return out, err
}
