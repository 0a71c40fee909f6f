package controllers

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"path"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/controllers/policy"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/version"
	"github.com/msgbench/msgbench/loadgen/control"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/complete"
	"github.com/msgbench/msgbench/results/store"
	"github.com/msgbench/msgbench/suite"
)

// maxResultConfigMap keeps the gzipped result under the 1 MiB limit of a ConfigMap.
const maxResultConfigMap = 900 << 10

// collect fetches every worker's full result, merges them exactly, writes the summary into the
// status, the merged result into a ConfigMap and, when configured, the object store; then it
// lets the workers exit.
func (r *Reconciler) collect(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	st.phase = v1alpha1.PhaseCollecting
	ws, err := r.workerPods(ctx, st)
	if err != nil {
		return false, err
	}
	c := r.controlClient(st)
	for _, w := range ws {
		if w.Addr == "" {
			return false, fail("worker %d lost its pod before its result was collected", w.Index)
		}
	}
	began := time.Now()
	parts := make([]*results.Result, len(ws)) // each call writes only its worker's slot
	errs := forEachWorker(ws, func(w policy.Worker) error {
		res, err := c.Result(ctx, w.Addr)
		parts[w.Index] = res
		return err
	})
	if len(errs) > 0 {
		return false, errors.Join(errs...)
	}
	// The workers measured their lateness on their own clocks; the offset of each clock from the
	// operator's puts every worker's start on one time base, right to ± half the round trip. A
	// pass of its own, so that no result download slows the round trips.
	errs = forEachWorker(ws, func(w policy.Worker) error {
		offset, rtt, err := c.ClockOffset(ctx, w.Addr)
		if err != nil {
			return err
		}
		control.OnOurClock(parts[w.Index], offset, rtt)
		return nil
	})
	if len(errs) > 0 {
		return false, errors.Join(errs...)
	}
	fetched := time.Since(began)
	run := complete.Run{
		Mode:     "kubernetes",
		Timeline: timelineMarks(mb, st.plan.Timing.Warmup),
		Environment: func(e *results.Environment) {
			if e.MsgbenchVersion == "" { // the workers' build is what measured
				e.MsgbenchVersion = version.Version
			}
			e.Broker, e.Host = r.brokerDescription(mb), ""
		},
		Caveats: func(*results.Result) []results.Caveat { return concurrentCaveat(mb) },
	}
	if st.plan != nil && st.plan.Network.Impaired {
		// The workers measure through the link; the numbers Chaos Mesh was given are the operator's.
		run.Network = st.plan.Network.Describe("Chaos Mesh NetworkChaos")
	}
	merged, err := complete.Complete(parts, run)
	if err != nil {
		return false, fail("%v", err)
	}
	merged.Name = mb.Name
	mb.Status.Summary = policy.Summarize(merged)
	for _, c := range policy.MeasurementConditions(merged) {
		r.setCondition(st, c.Type, c.Status, c.Reason, c.Message)
	}

	data, err := json.MarshalIndent(merged, "", "  ")
	if err != nil {
		return false, err
	}
	if err := r.storeResultConfigMap(ctx, st, data); err != nil {
		return false, err
	}
	r.storeObject(ctx, st, data, parts)
	r.setCondition(st, v1alpha1.ConditionCompleted, metav1.ConditionTrue, "Collected", collectedMessage(len(parts), merged.WorkersStart))
	log.FromContext(ctx).Info("results collected", "workers", len(parts), "took", fetched.String(), "workersStart", merged.WorkersStart)
	forEachWorker(ws, func(w policy.Worker) error { // best effort: a worker that misses this exits after its --hold
		return c.Exit(ctx, w.Addr)
	})
	if merged.Phase == string(v1alpha1.PhaseFailed) {
		return false, fail("the run failed: %s", merged.Message)
	}
	st.phase, st.waiting = v1alpha1.PhaseSucceeded, ""
	return true, nil
}

// concurrentCaveat says that other runs of the benchmark's suite may have measured at the same
// time (the suite's spec.concurrency), on the same nodes.
func concurrentCaveat(mb *v1alpha1.MessagingBenchmark) []results.Caveat {
	n := mb.Annotations[suite.AnnotationConcurrent]
	if n == "" {
		return nil
	}
	return []results.Caveat{{Type: results.CaveatConcurrentRuns, Message: fmt.Sprintf(
		"up to %s runs of suite %s measured at once (its spec.concurrency): another run may have shared this run's nodes", n, mb.Labels[v1alpha1.LabelSuite])}}
}

// collectedMessage is the Completed condition's message: how many workers, and how closely
// they started (the status has no field of its own for it).
func collectedMessage(workers int, s *results.StartSpread) string {
	msg := fmt.Sprintf("%d workers finished; results merged", workers)
	if s != nil {
		msg += fmt.Sprintf("; the workers started within %s of each other (the last %s after the agreed start; control round trips up to %s)",
			time.Duration(s.SpreadMicros)*time.Microsecond, time.Duration(s.LatestMicros)*time.Microsecond, time.Duration(s.MaxControlRTTMicros)*time.Microsecond)
	}
	return msg
}

func (r *Reconciler) brokerDescription(mb *v1alpha1.MessagingBenchmark) string {
	switch mb.Spec.Broker.Type {
	case v1alpha1.BrokerExternal:
		return "external " + mb.Spec.Broker.External.Address
	case v1alpha1.BrokerKafka:
		return "kafka " + kafka.Version + " (Strimzi)" // the version the operator asks Strimzi for
	}
	image, t := r.Config.BrokerImage(mb), string(mb.Spec.Broker.Type)
	if v := imageVersion(image); v != "" {
		return t + " " + v + " (" + image + ")"
	}
	return t + " (" + image + ")"
}

// imageVersion is the version an image reference's tag names ("2.0.18" of
// eclipse-mosquitto:2.0.18, "2.0.18" of …:2.0.18-openssl), "" for none, latest or a digest.
func imageVersion(image string) string {
	if i := strings.LastIndexByte(image, '@'); i >= 0 {
		image = image[:i]
	}
	i := strings.LastIndexByte(image, ':')
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	tag := strings.TrimPrefix(image[i+1:], "v")
	if tag == "" || tag[0] < '0' || tag[0] > '9' {
		return ""
	}
	if j := strings.IndexByte(tag, '-'); j > 0 {
		tag = tag[:j]
	}
	return tag
}

// storeResultConfigMap keeps the merged result in the cluster, so that it survives without an
// object store: kubectl get cm <name>-result -o jsonpath='{.binaryData.result\.json\.gz}' | base64 -d | gunzip
func (r *Reconciler) storeResultConfigMap(ctx context.Context, st *run, data []byte) error {
	gz := gzipped(data)
	if len(gz) > maxResultConfigMap {
		st.mb.Status.Message = fmt.Sprintf("the merged result is %d KiB gzipped, too large for a ConfigMap; set spec.results.objectStore to keep it", len(gz)>>10)
		return nil
	}
	return r.apply(ctx, resources.ResultConfigMap(st.mb, gz))
}

// gzipped is data compressed for a ConfigMap's binaryData (writing to memory cannot fail).
func gzipped(data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(data)
	_ = zw.Close()
	return buf.Bytes()
}

// openStore opens the object store spec names, with the credentials of its secretRef in ns.
func (r *Reconciler) openStore(ctx context.Context, ns string, spec *v1alpha1.ObjectStoreSpec) (store.Store, error) {
	var creds store.Credentials
	if spec.SecretRef != nil {
		var s corev1.Secret
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: spec.SecretRef.Name}, &s); err != nil {
			return nil, fmt.Errorf("spec.results.objectStore.secretRef: %w", err)
		}
		creds = store.Credentials{AccessKeyID: strings.TrimSpace(string(s.Data["accessKeyID"])), SecretAccessKey: strings.TrimSpace(string(s.Data["secretAccessKey"]))}
		if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
			return nil, fmt.Errorf("spec.results.objectStore.secretRef: Secret %s needs keys accessKeyID and secretAccessKey", s.Name)
		}
	}
	return r.OpenStore(spec, creds)
}

// storeObject uploads the merged result and every worker's to the object store; the outcome is
// the ResultsStored condition, and a failed upload does not fail the run (the summary is in
// the status, the full result in the ConfigMap).
func (r *Reconciler) storeObject(ctx context.Context, st *run, merged []byte, parts []*results.Result) {
	mb := st.mb
	os := mb.Spec.Results.ObjectStore
	if os == nil {
		r.setCondition(st, v1alpha1.ConditionResultsStored, metav1.ConditionTrue, "ConfigMap",
			"no object store configured; the full result is in ConfigMap "+st.names.Result)
		return
	}
	if err := r.upload(ctx, st, merged, parts); err != nil {
		r.setCondition(st, v1alpha1.ConditionResultsStored, metav1.ConditionFalse, "UploadFailed", err.Error()+
			"; the summary is in the status and the full result in ConfigMap "+st.names.Result)
		return
	}
	r.setCondition(st, v1alpha1.ConditionResultsStored, metav1.ConditionTrue, "Uploaded", "uploaded to "+mb.Status.ResultsURL)
}

func (r *Reconciler) upload(ctx context.Context, st *run, merged []byte, parts []*results.Result) error {
	mb := st.mb
	s, err := r.openStore(ctx, mb.Namespace, mb.Spec.Results.ObjectStore)
	if err != nil {
		return err
	}
	base := path.Join(mb.Namespace, mb.Name, string(mb.UID))
	if err := store.PutWithRetry(ctx, s, base+"/result.json", merged, r.UploadAttempts); err != nil {
		return err
	}
	idx := make([]int, 0, len(parts))
	for i := range parts {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		data, err := json.MarshalIndent(parts[i], "", "  ")
		if err != nil {
			return err
		}
		if err := store.PutWithRetry(ctx, s, fmt.Sprintf("%s/workers/%d.json", base, i), data, r.UploadAttempts); err != nil {
			return err
		}
	}
	mb.Status.ResultsURL = s.URL(base + "/result.json")
	return nil
}
