package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/spf13/cobra"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers"
	"github.com/msgbench/msgbench/controllers/resources"
)

type operatorFlags struct {
	metricsAddr, probeAddr, namespace, pullPolicy string
	leaderElect                                   bool
	concurrency                                   int
	cfg                                           resources.Config
}

func newOperatorCommand() *cobra.Command {
	f := operatorFlags{cfg: resources.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Run the Kubernetes operator that runs MessagingBenchmarks",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runOperator(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint (0 disables it)")
	fl.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	fl.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader, so that several replicas can run with one active")
	fl.StringVar(&f.namespace, "namespace", "", "watch only this namespace (default: all)")
	fl.IntVar(&f.concurrency, "max-concurrent-reconciles", 8, "benchmarks reconciled at once")
	fl.StringVar(&f.cfg.MsgbenchImage, "msgbench-image", f.cfg.MsgbenchImage, "image of the workers and gateways")
	fl.StringVar(&f.cfg.MosquittoImage, "mosquitto-image", f.cfg.MosquittoImage, "default image of the Mosquitto broker")
	fl.StringVar(&f.pullPolicy, "image-pull-policy", string(f.cfg.ImagePullPolicy), "pull policy of every container the operator creates")
	fl.Int32Var(&f.cfg.ControlPort, "worker-control-port", f.cfg.ControlPort, "port of the workers' control endpoint")
	return cmd
}

func runOperator(cmd *cobra.Command, f operatorFlags) error {
	ctrl.SetLogger(zap.New(zap.UseDevMode(false)))
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	f.cfg.ImagePullPolicy = corev1.PullPolicy(f.pullPolicy)
	opts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress: f.probeAddr,
		LeaderElection:         f.leaderElect,
		LeaderElectionID:       "msgbench-operator.msgbench.io",
		Controller:             ctrlcontroller.Controller{MaxConcurrentReconciles: f.concurrency},
		Client:                 controllers.ClientOptions(),
	}
	if f.namespace != "" {
		opts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{f.namespace: {}}}
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("no Kubernetes configuration (in-cluster or $KUBECONFIG): %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	if _, err := controllers.NewReconciler(mgr, controllers.Options{Config: f.cfg, Metrics: controllers.NewMetrics(mgr.GetClient())}); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(cmd.Context())
}
