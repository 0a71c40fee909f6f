package controllers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/caps"
	"github.com/msgbench/msgbench/controllers/policy"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/results/objectives"
)

// common creates what every run needs: the manifest for workers and gateways, the control
// token, the workers' identity and the TLS certificate.
func (r *Reconciler) common(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	st.phase = v1alpha1.PhaseProvisioning
	// The API checks an objective's shape only: a figure, unit or device group it cannot judge
	// fails the run before anything starts, not after it measured.
	if _, err := objectives.ParseSpec(&mb.Spec); err != nil {
		return false, fail("%v", err)
	}
	// A broker setting the broker does not know, or one msgbench manages, would stop the broker
	// after everything was created: refuse it first, naming the key.
	if err := resources.CheckBrokerConfigKeys(mb, imageVersion(r.Config.BrokerImage(mb))); err != nil {
		return false, fail("%v", err)
	}
	token := make([]byte, 24)
	if _, err := rand.Read(token); err != nil {
		return false, err
	}
	if err := r.createOnce(ctx, resources.ControlSecret(mb, hex.EncodeToString(token))); err != nil {
		return false, err
	}
	var secret corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: mb.Namespace, Name: st.names.Control}, &secret); err != nil {
		return false, err
	}
	st.token = string(secret.Data["token"])
	cm, err := resources.SpecConfigMap(mb, st.plan)
	if err != nil {
		return false, err
	}
	if err := r.apply(ctx, cm); err != nil {
		return false, err
	}
	if err := r.apply(ctx, resources.WorkerServiceAccount(mb)); err != nil {
		return false, err
	}
	if ok, err := r.clientCA(ctx, st); !ok || err != nil {
		return false, err
	}
	if !st.plan.NeedsCertificate() {
		return true, nil
	}
	if mb.Spec.TLS != nil && mb.Spec.TLS.SecretRef != nil { // QUIC needs a certificate with no tls block
		var s corev1.Secret
		err := r.Get(ctx, client.ObjectKey{Namespace: mb.Namespace, Name: mb.Spec.TLS.SecretRef.Name}, &s)
		if apierrors.IsNotFound(err) {
			// GitOps tools apply in any order: wait for the Secret rather than fail at once.
			st.waiting = fmt.Sprintf("waiting for Secret %s named by spec.tls.secretRef", mb.Spec.TLS.SecretRef.Name)
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, k := range []string{"ca.crt", corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
			if len(s.Data[k]) == 0 {
				return false, fail("spec.tls.secretRef: Secret %s has no key %s (it needs ca.crt, tls.crt and tls.key)", s.Name, k)
			}
		}
		return true, nil
	}
	var existing corev1.Secret
	err = r.Get(ctx, client.ObjectKey{Namespace: mb.Namespace, Name: st.names.TLS}, &existing)
	if err == nil {
		return true, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, err
	}
	bundle, err := certs.New(mb.Name, resources.CertificateHosts(mb), 30*24*time.Hour)
	if err != nil {
		return false, err
	}
	return true, r.createOnce(ctx, resources.TLSSecret(mb, bundle))
}

// clientCA makes sure the devices' CA of spec.tls.clientCertificates is there: the user's
// kubernetes.io/tls Secret (ca.secretRef; waited for, its certificate and key checked), or one the
// operator generates for the run (an ECDSA P-256 CA, owned by the benchmark).
func (r *Reconciler) clientCA(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	cc := mb.Spec.ClientCertificates()
	if cc == nil {
		return true, nil
	}
	if cc.CA != nil && cc.CA.SecretRef != nil {
		var s corev1.Secret
		err := r.Get(ctx, client.ObjectKey{Namespace: mb.Namespace, Name: cc.CA.SecretRef.Name}, &s)
		if apierrors.IsNotFound(err) {
			st.waiting = fmt.Sprintf("waiting for Secret %s named by spec.tls.clientCertificates.ca.secretRef", cc.CA.SecretRef.Name)
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
			if len(s.Data[k]) == 0 {
				return false, fail("spec.tls.clientCertificates.ca.secretRef: Secret %s has no key %s (it needs the CA's certificate tls.crt and private key tls.key)", s.Name, k)
			}
		}
		if _, err := certs.NewIssuer(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey], string(cc.KeyType), cc.CommonName); err != nil {
			return false, fail("spec.tls.clientCertificates.ca.secretRef: Secret %s: %v", s.Name, err)
		}
		return true, nil
	}
	var existing corev1.Secret
	err := r.Get(ctx, client.ObjectKey{Namespace: mb.Namespace, Name: st.names.ClientCA}, &existing)
	if err == nil {
		return true, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, err
	}
	certPEM, keyPEM, err := certs.NewCA("msgbench devices CA "+mb.Name, 30*24*time.Hour)
	if err != nil {
		return false, err
	}
	return true, r.createOnce(ctx, resources.ClientCASecret(mb, certPEM, keyPEM))
}

// mosquittoCAFile adds Mosquitto's cafile (the server's CA and the devices' CA, certificates
// only) to the broker's objects with spec.tls.clientCertificates.
func (r *Reconciler) mosquittoCAFile(ctx context.Context, mb *v1alpha1.MessagingBenchmark, objs []client.Object) error {
	var server, devices corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: mb.Namespace, Name: resources.TLSSecretName(mb)}, &server); err != nil {
		return err
	}
	if err := r.Get(ctx, client.ObjectKey{Namespace: mb.Namespace, Name: resources.ClientCASecretName(mb)}, &devices); err != nil {
		return err
	}
	resources.WithMosquittoCAFile(mb, objs, server.Data["ca.crt"], devices.Data[corev1.TLSCertKey])
	return nil
}

// broker provisions the broker, or checks an external one is reachable.
func (r *Reconciler) broker(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	switch mb.Spec.Broker.Type {
	case v1alpha1.BrokerExternal:
		return r.externalBroker(ctx, st)
	case v1alpha1.BrokerKafka:
		return r.kafkaBroker(ctx, st)
	}
	// What the broker's version cannot do is known only now, from the image's tag.
	image := r.Config.BrokerImage(mb)
	if err := caps.Check(mb.Spec.Broker.Type, imageVersion(image), st.plan); err != nil {
		return false, fail("%v (image %s)", err, image)
	}
	objs, err := resources.BrokerObjects(mb, st.plan, r.Config)
	if err != nil {
		return false, fail("%v", err)
	}
	if resources.NeedsMosquittoCAFile(mb, st.plan) {
		if err := r.mosquittoCAFile(ctx, mb, objs); err != nil {
			return false, err
		}
	}
	name := brokerName(mb.Spec.Broker.Type)
	for _, obj := range objs {
		if err := r.apply(ctx, obj); err != nil {
			return false, err
		}
	}
	ready, since, why, err := r.deploymentReady(ctx, mb.Namespace, st.names.Broker)
	if err != nil || !ready {
		r.setCondition(st, v1alpha1.ConditionBrokerReady, metav1.ConditionFalse, "Starting", why)
		st.waiting = "waiting for the broker: " + why
		return false, err
	}
	if meta.IsStatusConditionTrue(mb.Status.Conditions, v1alpha1.ConditionBrokerReady) {
		return true, nil // answered once: no dial on every later pass
	}
	addr := resources.BrokerAddress(mb, st.plan)
	if r.ProbeService == nil {
		r.setCondition(st, v1alpha1.ConditionBrokerReady, metav1.ConditionTrue, "Available", name+" is available behind "+addr+
			" (not dialled: the operator runs outside the cluster)")
		return true, nil
	}
	err = r.ProbeService(ctx, addr)
	switch {
	case err == nil:
		r.setCondition(st, v1alpha1.ConditionBrokerReady, metav1.ConditionTrue, "Answering", name+" answers MQTT through its Service "+addr)
		return true, nil
	case r.Now().Sub(since) > r.ServiceGrace:
		r.setCondition(st, v1alpha1.ConditionBrokerReady, metav1.ConditionTrue, "AvailableNotAnswering", fmt.Sprintf(
			"%s is available, but the operator could not reach it through its Service %s for %s (%v); the workers start all the same and keep trying until spec.timeout (a NetworkPolicy may stop the operator but not them)",
			name, addr, r.ServiceGrace, err))
		return true, nil
	}
	// Its pods are ready, but kube-proxy and DNS program a new Service on each node some time
	// later, longer on a busy node: workers started now would only meet dial timeouts.
	msg := fmt.Sprintf("%s is available but does not answer through its Service %s yet: %v", name, addr, err)
	r.setCondition(st, v1alpha1.ConditionBrokerReady, metav1.ConditionFalse, "NotAnswering", msg)
	st.waiting = "waiting for the broker: " + msg
	return false, nil
}

// brokerName is how messages name a broker type.
func brokerName(t v1alpha1.BrokerType) string {
	switch t {
	case v1alpha1.BrokerMosquitto, "":
		return "Mosquitto"
	case v1alpha1.BrokerRabbitMQ:
		return "RabbitMQ"
	case v1alpha1.BrokerArtemis:
		return "ActiveMQ Artemis"
	case v1alpha1.BrokerEMQX:
		return "EMQX"
	case v1alpha1.BrokerNanoMQ:
		return "NanoMQ"
	case v1alpha1.BrokerHiveMQCE:
		return "HiveMQ CE"
	case v1alpha1.BrokerVerneMQ:
		return "VerneMQ"
	}
	return string(t)
}

func (r *Reconciler) externalBroker(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	if meta.IsStatusConditionTrue(mb.Status.Conditions, v1alpha1.ConditionBrokerReady) {
		return true, nil
	}
	addr := mb.Spec.Broker.External.Address
	err := r.Dial(ctx, addr)
	if err == nil {
		r.setCondition(st, v1alpha1.ConditionBrokerReady, metav1.ConditionTrue, "Reachable", "external broker "+addr+" accepts connections")
		return true, nil
	}
	msg := fmt.Sprintf("external broker %s is not reachable from the operator: %v", addr, err)
	r.setCondition(st, v1alpha1.ConditionBrokerReady, metav1.ConditionFalse, "Unreachable", msg)
	if r.Now().Sub(mb.CreationTimestamp.Time) > r.ExternalGrace {
		return false, fail("%s (tried for %s; check spec.broker.external.address and network policies)", msg, r.ExternalGrace)
	}
	st.waiting = msg + "; retrying"
	return false, nil
}

// gateway runs the protocol gateways the groups need, one per mode (mqtt-sn, http, quic), and
// waits for each.
func (r *Reconciler) gateway(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	modes := st.plan.GatewayModes()
	if ext := st.plan.ExternalGateway(); ext != "" && len(modes) == 0 {
		r.setCondition(st, v1alpha1.ConditionGatewayReady, metav1.ConditionTrue, "External", protocols(st.plan)+" clients go through the external gateway at "+ext+" (spec.gateway.external)")
		return true, nil
	}
	if len(modes) == 0 {
		r.setCondition(st, v1alpha1.ConditionGatewayReady, metav1.ConditionTrue, "NotRequired", protocols(st.plan)+" clients talk to the broker directly")
		return true, nil
	}
	for _, mode := range modes {
		for _, obj := range []client.Object{resources.GatewayDeployment(mb, st.plan, mode, r.Config), resources.GatewayService(mb, st.plan, mode)} {
			if err := r.apply(ctx, obj); err != nil {
				return false, err
			}
		}
	}
	for _, mode := range modes {
		ready, _, why, err := r.deploymentReady(ctx, mb.Namespace, resources.GatewayName(mb, st.plan, mode))
		if err != nil || !ready {
			r.setCondition(st, v1alpha1.ConditionGatewayReady, metav1.ConditionFalse, "Starting", why)
			st.waiting = "waiting for the " + mode + " gateway: " + why
			return false, err
		}
	}
	msg := "gateway " + modes[0] + " is serving"
	if len(modes) > 1 {
		msg = "gateways " + strings.Join(modes, ", ") + " are serving"
	}
	r.setCondition(st, v1alpha1.ConditionGatewayReady, metav1.ConditionTrue, "Available", msg)
	return true, nil
}

// deploymentReady reports whether a Deployment has every replica available and since when (its
// Available condition's last transition), and if not, why in words a user can act on (the pods'
// waiting reasons: ImagePullBackOff, CrashLoopBackOff, …).
func (r *Reconciler) deploymentReady(ctx context.Context, ns, name string) (bool, time.Time, string, error) {
	var d appsv1.Deployment
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
		return false, time.Time{}, "", err
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas >= want {
		since := d.CreationTimestamp.Time
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				since = c.LastTransitionTime.Time
			}
		}
		return true, since, "", nil
	}
	why := fmt.Sprintf("Deployment %s has %d/%d replicas available", name, d.Status.AvailableReplicas, want)
	if problems := r.podProblems(ctx, ns, d.Spec.Selector.MatchLabels); problems != "" {
		why += " (" + problems + ")"
	}
	return false, time.Time{}, why, nil
}

// podProblems describes why the selected pods are not running.
func (r *Reconciler) podProblems(ctx context.Context, ns string, selector map[string]string) string {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(selector)); err != nil {
		return ""
	}
	var out []string
	for i := range pods.Items {
		if d := policy.PodDiagnosis(&pods.Items[i]); d != "" {
			out = append(out, fmt.Sprintf("pod %s: %s", pods.Items[i].Name, d))
		}
	}
	sort.Strings(out)
	return strings.TrimSpace(strings.Join(out, "; "))
}

// DialTCP checks that address accepts a TCP connection within 3 s.
func DialTCP(ctx context.Context, address string) error {
	d := net.Dialer{Timeout: 3 * time.Second}
	c, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return err
	}
	return c.Close()
}
