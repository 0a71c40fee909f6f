package controllers_test

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/controllers"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/gateway"
	_ "github.com/msgbench/msgbench/gateway/all"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/control"
	_ "github.com/msgbench/msgbench/loadgen/drivers/all"
	"github.com/msgbench/msgbench/plan"
)

var (
	env    *testenv.Env
	broker *mosquitto.Process
	scheme = kruntime.NewScheme()
	// controlPort is the workers' control port; each fake pod gets its own loopback address.
	controlPort int32
)

// minParallel is how many tests that called t.Parallel run at once unless -parallel says
// otherwise. Their time is spent waiting — for benchmark windows, timeouts, polls, a JVM — not
// computing, so the default of GOMAXPROCS (2 on CI) would leave the machine idle. The tests
// whose assertions are about timing (start skew, throughput, a timeline's steps) do not call
// t.Parallel, so they run alone before the parallel ones.
const minParallel = 4

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", strconv.Itoa(max(runtime.GOMAXPROCS(0), minParallel)))
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.InfoLevel)))
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if broker, err = mosquitto.Start(context.Background(), mosquitto.Options{Host: "127.0.0.1", MaxInflight: 20}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		controlPort = int32(l.Addr().(*net.TCPAddr).Port)
		_ = l.Close()
	}
	code := m.Run()
	stopLocalKafka()
	_ = broker.Stop()
	_ = env.Stop()
	os.Exit(code)
}

var nsSeq atomic.Int32

// newNamespace makes a namespace enforcing the restricted Pod Security Standard: every pod the
// fake kubelet creates from the operator's templates must pass it.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("op-%d-%d", time.Now().UnixNano()%100000, nsSeq.Add(1))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

// startOperator runs the reconciler in a manager watching only ns; stop ends it.
func startOperator(t *testing.T, ns string) (stop func()) {
	t.Helper()
	return startOperatorWith(t, ns, env.Config, nil)
}

// startOperatorWith starts the operator for namespace ns with cfg (the API request counter wraps
// its transport) and the suite's options, changed by tweak when it is not nil.
func startOperatorWith(t *testing.T, ns string, cfg *rest.Config, tweak func(*controllers.Options)) (stop func()) {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Client:     controllers.ClientOptions(),
		Controller: config.Controller{SkipNameValidation: ptrTo(true), MaxConcurrentReconciles: 8},
	})
	if err != nil {
		t.Fatal(err)
	}
	rc := resources.DefaultConfig()
	rc.ControlPort = controlPort
	o := controllers.Options{
		Config: rc, Poll: 200 * time.Millisecond, StartDelay: time.Second, UploadAttempts: 2, ExternalGrace: 2 * time.Second,
		InjectionTimeout: 3 * time.Second, HTTP: &http.Client{Timeout: 5 * time.Second},
	}
	if tweak != nil {
		tweak(&o)
	}
	if _, err := controllers.NewReconciler(mgr, o); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func ptrTo[T any](v T) *T { return &v }

// kubelet plays the parts of a cluster that envtest lacks: the Deployment and Job controllers
// and the kubelet. Job pods are created from the operator's template (so the namespace's Pod
// Security admission checks them) and "run" as in-process workers: the real load generator
// with the real control protocol, on their own loopback address, against the suite's Mosquitto.
type kubelet struct {
	t  *testing.T
	ns string
	c  client.Client
	// r lists the namespace's Deployments and Jobs from an informer's cache: a LIST of each
	// every tick decoded whole under -race was a good part of the package's CPU.
	r client.Reader
	// brokerNeverReady keeps the broker Deployment unavailable with this waiting reason.
	brokerNeverReady string
	// failWorker makes the worker with this index fail once it is ready (-1: none).
	failWorker int
	// deleteWorker deletes the pod of the worker with this index once it is ready; a finalizer
	// keeps it terminating, as the Job controller's tracking finalizer does (-1: none).
	deleteWorker int
	// failBenchmark makes worker 0 of every benchmark whose name contains it fail once ready.
	failBenchmark string
	// workerBroker is where the workers connect (default: the test's Mosquitto).
	workerBroker string

	mu      sync.Mutex
	running map[string]bool // pods with a worker
	// gateways are the in-process gateways of device-group runs' gateway Deployments, by the
	// Deployment's (and its Service's) name.
	gateways map[string]gateway.Gateway
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

var ipSeq atomic.Int32

func startKubelet(t *testing.T, ns string, tweak func(*kubelet)) {
	k := &kubelet{t: t, ns: ns, c: env.Client, failWorker: -1, deleteWorker: -1, running: map[string]bool{}, gateways: map[string]gateway.Gateway{}}
	if tweak != nil {
		tweak(k)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel = cancel
	informers, err := cache.New(env.Config, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	k.r = informers
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		_ = informers.Start(ctx)
	}()
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		for ctx.Err() == nil {
			k.tick(ctx)
			time.Sleep(50 * time.Millisecond)
		}
	}()
	t.Cleanup(func() {
		cancel()
		k.wg.Wait()
		for _, g := range k.gateways {
			_ = g.Close()
		}
	})
}

func (k *kubelet) tick(ctx context.Context) {
	var deps appsv1.DeploymentList
	if err := k.r.List(ctx, &deps, client.InNamespace(k.ns)); err == nil {
		for i := range deps.Items {
			k.deployment(ctx, &deps.Items[i])
		}
	}
	var jobs batchv1.JobList
	if err := k.r.List(ctx, &jobs, client.InNamespace(k.ns)); err == nil {
		for i := range jobs.Items {
			k.job(ctx, &jobs.Items[i])
		}
	}
}

func (k *kubelet) deployment(ctx context.Context, d *appsv1.Deployment) {
	if k.brokerNeverReady != "" && d.Labels[v1alpha1.LabelComponent] == v1alpha1.ComponentBroker {
		k.podFromTemplate(ctx, d.Name+"-0", &d.Spec.Template, nil, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mosquitto", State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: k.brokerNeverReady, Message: "back-off pulling image"}}}}
		})
		return
	}
	if d.Labels[v1alpha1.LabelComponent] == v1alpha1.ComponentGateway && !k.gateway(ctx, d) {
		return
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Status.AvailableReplicas == want && d.Status.ObservedGeneration == d.Generation {
		return
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: want, ReadyReplicas: want, AvailableReplicas: want, UpdatedReplicas: want}
	_ = k.c.Status().Update(ctx, d)
}

// gateway runs a device-group run's gateway Deployment in-process (`msgbench gateway --mode M`,
// the mode from its args, its groups from the plan its spec volume holds), bridging to the
// suite's Mosquitto, and reports whether it runs. A flat run's gateway is only marked available,
// as before: those tests' workers talk to the broker.
func (k *kubelet) gateway(ctx context.Context, d *appsv1.Deployment) bool {
	k.mu.Lock()
	_, up := k.gateways[d.Name]
	k.mu.Unlock()
	if up {
		return true
	}
	args := argValues(d.Spec.Template.Spec.Containers[0].Args)
	cmName := ""
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "spec" && v.ConfigMap != nil {
			cmName = v.ConfigMap.Name
		}
	}
	var cm corev1.ConfigMap
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: cmName}, &cm); err != nil {
		return false
	}
	p, err := plan.Unmarshal([]byte(cm.Data[plan.FileName]))
	if err != nil {
		k.t.Errorf("the gateway cannot read the operator's plan: %v", err)
		return false
	}
	if p.Groups[0].Fleet == nil {
		return true
	}
	mode := firstOf(args["--mode"])
	gw, err := gateway.Start(ctx, mode, gateway.Options{Listen: "127.0.0.1:0", Broker: broker.Addr, Groups: p.GatewayGroups(mode)})
	if err != nil {
		k.t.Errorf("gateway %s (%s): %v", d.Name, mode, err)
		return false
	}
	k.mu.Lock()
	k.gateways[d.Name] = gw
	k.mu.Unlock()
	return true
}

// argValues are a container's --flag value arguments, each flag's values in order.
func argValues(args []string) map[string][]string {
	out := map[string][]string{}
	for i := 0; i+1 < len(args); i++ {
		if strings.HasPrefix(args[i], "--") && !strings.HasPrefix(args[i+1], "--") {
			out[args[i]] = append(out[args[i]], args[i+1])
		}
	}
	return out
}

func firstOf(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// podFromTemplate creates a pod from a template unless it exists, then sets its status.
func (k *kubelet) podFromTemplate(ctx context.Context, name string, tmpl *corev1.PodTemplateSpec, annotations map[string]string, status func(*corev1.Pod)) *corev1.Pod {
	var p corev1.Pod
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: name}, &p); err == nil {
		return &p
	}
	p = corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns, Labels: tmpl.Labels, Annotations: map[string]string{}}, Spec: *tmpl.Spec.DeepCopy()}
	for key, v := range tmpl.Annotations {
		p.Annotations[key] = v
	}
	for key, v := range annotations {
		p.Annotations[key] = v
	}
	if err := k.c.Create(ctx, &p); err != nil {
		if !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
			k.t.Errorf("creating pod %s from the operator's template: %v", name, err)
		}
		return nil
	}
	status(&p)
	_ = k.c.Status().Update(ctx, &p)
	return &p
}

func (k *kubelet) job(ctx context.Context, j *batchv1.Job) {
	n := int(*j.Spec.Completions)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%d", j.Name, i)
		k.mu.Lock()
		started := k.running[name]
		k.mu.Unlock()
		if started {
			continue
		}
		seq := ipSeq.Add(1)
		ip := fmt.Sprintf("127.0.%d.%d", 10+seq/250, 2+seq%250)
		pod := k.podFromTemplate(ctx, name, &j.Spec.Template, map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(i)}, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.PodIP = ip // the pod has its address; it runs once its control endpoint listens
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		})
		if pod == nil {
			continue
		}
		k.mu.Lock()
		k.running[name] = true
		k.mu.Unlock()
		k.wg.Add(1)
		go func(i int, pod *corev1.Pod) {
			defer k.wg.Done()
			k.runWorker(ctx, i, pod)
		}(i, pod)
	}
}

// runWorker runs one worker pod's container: `msgbench loadgen --control` in-process.
func (k *kubelet) runWorker(ctx context.Context, index int, pod *corev1.Pod) {
	mbName := pod.Annotations[resources.AnnotationBenchmark]
	var mb v1alpha1.MessagingBenchmark
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: mbName}, &mb); err != nil {
		return
	}
	names := resources.NamesOf(&mb)
	var cm corev1.ConfigMap
	var secret corev1.Secret
	if k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: names.Spec}, &cm) != nil ||
		k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: names.Control}, &secret) != nil {
		return
	}
	compiled, err := plan.Unmarshal([]byte(cm.Data[plan.FileName]))
	if err != nil {
		k.t.Errorf("the worker cannot read the operator's plan: %v", err)
		return
	}
	ctl := control.NewServer(string(secret.Data["token"]))
	ln, err := net.Listen("tcp", net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(controlPort))))
	if err != nil {
		k.t.Errorf("worker listen: %v", err)
		return
	}
	srv := &http.Server{Handler: ctl.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	k.setPod(ctx, pod.Name, func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning })

	readyCh := make(chan struct{})
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	resultCh := make(chan error, 1)
	address := workerAddress(k.t, compiled.Groups[0].Protocol)
	if k.workerBroker != "" {
		address = k.workerBroker
	}
	// The container's --groups and --endpoint, and a --broker that is one of the in-process
	// gateways: a Service's name (<name>.<namespace>.svc:port) becomes where that gateway
	// listens; the broker's Service (its MQTT listener: the suite's Mosquitto serves no
	// WebSocket) stays the suite's broker.
	args := argValues(pod.Spec.Containers[0].Args)
	at := func(svc string) string {
		if _, err := netip.ParseAddrPort(svc); err == nil {
			return svc // an address outside the cluster (spec.broker.external, spec.gateway.external)
		}
		name, _, _ := strings.Cut(svc, ".")
		k.mu.Lock()
		defer k.mu.Unlock()
		if gw := k.gateways[name]; gw != nil {
			return gw.Addr().String()
		}
		return address
	}
	var groups []string
	if g := firstOf(args["--groups"]); g != "" {
		groups = strings.Split(g, ",")
	}
	endpoints := map[string]string{}
	for _, e := range args["--endpoint"] {
		g, svc, _ := strings.Cut(e, "=")
		endpoints[g] = at(svc)
	}
	brokerArg := firstOf(args["--broker"])
	address = at(brokerArg)
	// spec.tls.clientCertificates: the worker reads the devices' CA (--client-ca, --client-ca-key)
	// and the server's CA (--ca) from the Secrets mounted where the flags point, and verifies
	// the broker by its Service's name, as `msgbench loadgen` in the pod does.
	var clientTLS *tls.Config
	var issuer *certs.Issuer
	if caFile, keyFile := firstOf(args["--client-ca"]), firstOf(args["--client-ca-key"]); caFile != "" {
		ca, err1 := k.mountedSecretFile(ctx, pod, caFile)
		key, err2 := k.mountedSecretFile(ctx, pod, keyFile)
		serverCA, err3 := k.mountedSecretFile(ctx, pod, firstOf(args["--ca"]))
		if err := errors.Join(err1, err2, err3); err != nil {
			k.t.Errorf("worker %s: %v", pod.Name, err)
			return
		}
		cc := mb.Spec.ClientCertificates()
		if issuer, err = certs.NewIssuer(ca, key, string(cc.KeyType), cc.CommonName); err != nil {
			k.t.Errorf("worker %s: the devices' CA: %v", pod.Name, err)
			return
		}
		host, _, _ := net.SplitHostPort(brokerArg)
		if clientTLS, err = certs.ClientTLS(serverCA, host, compiled.Groups[0].TLSVersion); err != nil {
			k.t.Errorf("worker %s: %v", pod.Name, err)
			return
		}
	}
	go func() {
		// The worker pod's own loop (control.Server.Run, as `msgbench loadgen --control` runs it).
		_, err := ctl.Run(runCtx, loadgen.Options{Name: compiled.Benchmark.Name, Plan: compiled, Worker: index, RunID: resources.RunID(&mb),
			Address: address, Endpoints: endpoints, Groups: groups, Ready: func() { close(readyCh) },
			TLS: clientTLS, ClientCerts: issuer,
			AccountRadio: true, // as a worker pod: no emulator sees its packets
		}, func(string, ...any) {})
		resultCh <- err
	}()
	select {
	case <-readyCh:
	case <-ctx.Done():
		return
	}
	k.setPod(ctx, pod.Name, func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	})
	if index == k.deleteWorker {
		time.Sleep(1500 * time.Millisecond) // mid-run
		const finalizer = "test.msgbench.io/terminating"
		var p corev1.Pod
		if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: pod.Name}, &p); err == nil {
			p.Finalizers = append(p.Finalizers, finalizer)
			if err := k.c.Update(ctx, &p); err != nil {
				k.t.Error(err)
			}
			if err := k.c.Delete(ctx, &p); err != nil {
				k.t.Error(err)
			}
			cancelRun()
			k.t.Cleanup(func() {
				var p corev1.Pod
				if k.c.Get(context.Background(), client.ObjectKey{Namespace: k.ns, Name: pod.Name}, &p) == nil {
					p.Finalizers = nil
					_ = k.c.Update(context.Background(), &p)
				}
			})
		}
		return
	}
	if index == k.failWorker || (index == 0 && k.failBenchmark != "" && strings.Contains(mbName, k.failBenchmark)) {
		time.Sleep(1500 * time.Millisecond) // mid-run
		// An OOM kill gives the worker no last word: the pod reports the death first, then
		// the in-process worker stops. (Cancelling it first let the operator read the
		// worker's own "context canceled" before the pod's reason, now and then.)
		k.setPod(ctx, pod.Name, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "loadgen", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "OOMKilled", Message: "worker ran out of memory"}}}}
		})
		cancelRun()
		return
	}
	runErr := <-resultCh
	select {
	case <-ctl.Exited():
	case <-ctx.Done():
		return
	}
	k.setPod(ctx, pod.Name, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodSucceeded
		if runErr != nil {
			p.Status.Phase = corev1.PodFailed
		}
	})
}

// mountedSecretFile reads the file at path in the pod's container from the Secret volume mounted
// at its folder, through the API, as the kubelet would have projected it (the volume's items, or
// every key of the Secret).
func (k *kubelet) mountedSecretFile(ctx context.Context, pod *corev1.Pod, path string) ([]byte, error) {
	dir, file := filepath.Split(path)
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		if filepath.Clean(m.MountPath) != filepath.Clean(dir) {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			key := file
			if len(v.Secret.Items) > 0 {
				key = ""
				for _, it := range v.Secret.Items {
					if it.Path == file {
						key = it.Key
					}
				}
			}
			var s corev1.Secret
			if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: v.Secret.SecretName}, &s); err != nil {
				return nil, fmt.Errorf("%s: Secret %s: %w", path, v.Secret.SecretName, err)
			}
			if key == "" || len(s.Data[key]) == 0 {
				return nil, fmt.Errorf("%s: not in Secret %s as mounted", path, v.Secret.SecretName)
			}
			return s.Data[key], nil
		}
	}
	return nil, fmt.Errorf("%s: no Secret volume mounted at %s", path, dir)
}

func (k *kubelet) setPod(ctx context.Context, name string, f func(*corev1.Pod)) {
	for i := 0; i < 20; i++ {
		var p corev1.Pod
		if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: name}, &p); err != nil {
			return
		}
		f(&p)
		if err := k.c.Status().Update(ctx, &p); err == nil || !apierrors.IsConflict(err) {
			return
		}
	}
}
