package main

import (
	"crypto/tls"
	"fmt"
	"os"
	"time"

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
	"github.com/msgbench/msgbench/internal/metricsauth"
)

type operatorFlags struct {
	metricsAddr, metricsCertDir, probeAddr, namespace, pullPolicy string
	leaderElect, metricsSecure, probeServices                     bool
	concurrency                                                   int
	injectionTimeout                                              time.Duration
	cfg                                                           resources.Config
	brokerImages                                                  map[string]string
}

func newOperatorCommand() *cobra.Command {
	f := operatorFlags{cfg: resources.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Run the Kubernetes operator that runs MessagingBenchmarks",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return runOperator(f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.metricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint (0 disables it)")
	fl.BoolVar(&f.metricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers the API server authenticates (TokenReview) and authorizes (SubjectAccessReview: get on /metrics); false serves plain HTTP to anyone")
	fl.StringVar(&f.metricsCertDir, "metrics-cert-dir", "", "folder with tls.crt and tls.key for the metrics endpoint, reloaded when they change (default: a self-signed certificate)")
	fl.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	fl.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader, so that several replicas can run with one active")
	fl.StringVar(&f.namespace, "namespace", "", "watch only this namespace (default: all)")
	fl.BoolVar(&f.probeServices, "probe-services", os.Getenv("KUBERNETES_SERVICE_HOST") != "",
		"start the workers only once the broker answers through its Service (a TCP dial from the operator; default: when the operator runs in a pod, as only then can it route Services)")
	fl.DurationVar(&f.injectionTimeout, "network-injection-timeout", 2*time.Minute, "how long Chaos Mesh may take to confirm a run's network impairment before the run fails")
	fl.IntVar(&f.concurrency, "max-concurrent-reconciles", 8, "benchmarks reconciled at once")
	fl.StringVar(&f.cfg.MsgbenchImage, "msgbench-image", f.cfg.MsgbenchImage, "image of the workers and gateways")
	fl.StringVar(&f.cfg.MosquittoImage, "mosquitto-image", f.cfg.MosquittoImage, "default image of the Mosquitto broker")
	fl.StringToStringVar(&f.brokerImages, "broker-image", nil, "default image of a broker type, TYPE=IMAGE (repeatable; e.g. rabbitmq=rabbitmq:4.1.4); unset types run the pinned official images")
	fl.StringVar(&f.pullPolicy, "image-pull-policy", string(f.cfg.ImagePullPolicy), "pull policy of every container the operator creates")
	fl.Int32Var(&f.cfg.ControlPort, "worker-control-port", f.cfg.ControlPort, "port of the workers' control endpoint")
	return cmd
}

func runOperator(f operatorFlags) error {
	ctrl.SetLogger(zap.New(zap.UseDevMode(false)))
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	f.cfg.ImagePullPolicy = corev1.PullPolicy(f.pullPolicy)
	images, err := resources.ParseBrokerImages(f.brokerImages)
	if err != nil {
		return err
	}
	f.cfg.BrokerImages = images
	opts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsOptions(f),
		HealthProbeBindAddress: f.probeAddr,
		LeaderElection:         f.leaderElect,
		LeaderElectionID:       "msgbench-operator.msgbench.io",
		// Release the Lease on SIGTERM, so that a new replica takes over at once.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    ctrlcontroller.Controller{MaxConcurrentReconciles: f.concurrency},
		Client:                        controllers.ClientOptions(),
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
	o := controllers.Options{Config: f.cfg, Metrics: controllers.NewMetrics(mgr.GetClient()), InjectionTimeout: f.injectionTimeout}
	if f.probeServices {
		o.ProbeService = controllers.DialTCP
	}
	if _, err := controllers.NewReconciler(mgr, o); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	// SIGTERM (the kubelet stopping the pod) or SIGINT stops the manager: the reconciles in
	// flight finish, the Lease is released and the process exits 0; a second signal exits at once.
	ctx := ctrl.SetupSignalHandler()
	return mgr.Start(ctx)
}

// The metrics endpoint asks the API server who a caller is and whether it may get /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// metricsOptions serve the metrics as kubebuilder's cmd/main.go does: over HTTPS, HTTP/1.1 only
// (HTTP/2's stream-cancellation and rapid-reset attacks, CVE-2023-44487 and CVE-2023-39325), to
// callers authenticated and authorized by the API server (internal/metricsauth: the checks of
// controller-runtime's filters.WithAuthenticationAndAuthorization without its dependencies).
func metricsOptions(f operatorFlags) metricsserver.Options {
	o := metricsserver.Options{BindAddress: f.metricsAddr, SecureServing: f.metricsSecure}
	if f.metricsSecure {
		o.FilterProvider = metricsauth.FilterProvider
		o.CertDir = f.metricsCertDir
		o.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	return o
}
