package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/plan"
)

func newRenderCommand() *cobra.Command {
	var file, namespace, uid string
	var set []string
	cfg := resources.DefaultConfig()
	var brokerImages map[string]string
	cmd := &cobra.Command{
		Use:   "render -f FILE [--namespace NS]",
		Short: "Print the Kubernetes objects the operator would create for a manifest",
		Long: `Prints, as YAML, every object the operator applies for a MessagingBenchmark, built by the same
code the operator runs: for review and GitOps diffs. Secrets generated at run time (the control
token, a generated certificate) are listed but not printed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mb, err := manifest.ReadFile(file, set...)
			if err != nil {
				return err
			}
			// Like kubectl: the manifest's namespace stands unless -n names one, and the two
			// must then agree.
			switch {
			case !cmd.Flags().Changed("namespace") && mb.Namespace != "":
				namespace = mb.Namespace
			case mb.Namespace != "" && mb.Namespace != namespace:
				//nolint:revive,staticcheck // kubectl's message, word for word
				return fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", mb.Namespace, namespace, mb.Namespace)
			}
			mb.Namespace, mb.UID = namespace, types.UID(uid)
			if cfg.BrokerImages, err = resources.ParseBrokerImages(brokerImages); err != nil {
				return err
			}
			objs, err := resources.Render(mb, cfg)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "# Objects the msgbench operator creates for MessagingBenchmark %s/%s.\n", namespace, mb.Name)
			p, err := plan.CompileBenchmark(mb, plan.Kubernetes) // Render compiled it the same way
			if err != nil {
				return err
			}
			for _, s := range resources.GeneratedSecrets(mb, p) {
				fmt.Fprintf(out, "# Also generated at run time, not shown: Secret %s\n", s)
			}
			for _, o := range objs {
				data, err := yaml.Marshal(o)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "---\n%s", data)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&file, "file", "f", "", "MessagingBenchmark manifest")
	fl.StringVarP(&namespace, "namespace", "n", "default", "namespace the benchmark would run in (default: the manifest's metadata.namespace, else default)")
	fl.StringVar(&uid, "uid", "00000000-0000-0000-0000-000000000000", "UID to put in owner references")
	fl.StringArrayVar(&set, "set", nil, "override a spec field (repeatable)")
	fl.StringVar(&cfg.MsgbenchImage, "msgbench-image", cfg.MsgbenchImage, "image of the workers and gateways")
	fl.StringVar(&cfg.MosquittoImage, "mosquitto-image", cfg.MosquittoImage, "default Mosquitto image")
	fl.StringToStringVar(&brokerImages, "broker-image", nil, "default image of a broker type, TYPE=IMAGE (repeatable)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}
