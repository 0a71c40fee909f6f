package suite

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
)

const doc = `apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmarkSuite
metadata:
  name: study
spec:
  template:
    protocol: mqtt
    http: {keepAlive: false}
    workload: {payloadBytes: 64, rate: 100, duration: 3s, warmup: 0s}
  matrix:
    axes:
    - field: protocol
      values: [mqtt, mqtt-sn, http]
    - field: qos
      values: [0, 1, 2]
    - name: clients
      fields: [workload.publishers, workload.subscribers, workload.topics]
      values: [1, 16]
    exclude:
    - {protocol: http, qos: 2}
    - {protocol: mqtt-sn, clients: 16}
    include:
    - {protocol: mqtt, qos: 1, clients: 64}
    - {protocol: mqtt, qos: 0, clients: 1}
    - {network.profile: lte, network.lossPercent: 2}
  repetitions: 3
`

func parse(t *testing.T, yaml string) (*v1alpha1.MessagingBenchmarkSuite, map[string]any) {
	t.Helper()
	d, err := manifest.ParseSuiteDoc([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return d.Suite, d.Template
}

func TestExpand(t *testing.T) {
	s, tmpl := parse(t, doc)
	points, err := Expand(s, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range points {
		names = append(names, p.Name)
	}
	// 3×3×2 = 18, less http-qos2 (×2) and mqtt-sn at 16 clients (×3): 13; plus two new
	// includes (the third repeats a point of the product).
	want := []string{
		"mqtt-qos0-clients1", "mqtt-qos0-clients16", "mqtt-qos1-clients1", "mqtt-qos1-clients16", "mqtt-qos2-clients1", "mqtt-qos2-clients16",
		"mqtt-sn-qos0-clients1", "mqtt-sn-qos1-clients1", "mqtt-sn-qos2-clients1",
		"http-qos0-clients1", "http-qos0-clients16", "http-qos1-clients1", "http-qos1-clients16",
		"mqtt-qos1-clients64", "losspercent2-lte",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("points\n got %v\nwant %v", names, want)
	}
	// Each point's benchmark: the values set, the template's explicit false and 0s kept (the
	// typed spec would drop them and their defaults, true and 5s, would come back).
	mb, err := Benchmark(s, tmpl, points[13], 2)
	if err != nil {
		t.Fatal(err)
	}
	w := mb.Spec.Workload
	if mb.Name != "study-mqtt-qos1-clients64-r2" || mb.Spec.QoS != 1 || w.Publishers != 64 || w.Subscribers != 64 || w.Topics != 64 ||
		w.Warmup.Duration != 0 || mb.Spec.HTTP.KeepAlive == nil || *mb.Spec.HTTP.KeepAlive || w.Rate != 100 {
		t.Errorf("benchmark %s: qos %d workload %+v keepAlive %v", mb.Name, mb.Spec.QoS, w, mb.Spec.HTTP.KeepAlive)
	}
	// A string field takes a number as written, as --set does.
	if mb, err := Benchmark(s, tmpl, points[14], 1); err != nil || mb.Spec.Network.LossPercent == nil || *mb.Spec.Network.LossPercent != "2" || mb.Spec.Network.Profile != "lte" {
		t.Errorf("include with a string field: %v %+v", err, mb)
	}
	if got := points[13].Text(); got["workload.topics"] != "64" || got["qos"] != "1" {
		t.Errorf("Text %v", got)
	}
}

func TestExpandRefusesWhatCannotRun(t *testing.T) {
	for _, c := range []struct{ edit, want string }{
		// A point the template cannot take is named, with the rule's message.
		{"values: [0, 1, 2]\n", "values: [0, 1, -1]\n"},
		{"    - field: qos\n", "    - field: protocol\n      name: again\n"},
		{"    - {protocol: http, qos: 2}\n", "    - {proto: http}\n"},
		{"    - {network.profile: lte, network.lossPercent: 2}\n", "    - {workload.rate: [1]}\n"},
		{"values: [0, 1, 2]\n", "values: [0, null]\n"},
	} {
		yaml := strings.Replace(doc, c.edit, c.want, 1)
		s, tmpl := parse(t, yaml)
		_, err := Expand(s, tmpl)
		if err == nil {
			t.Errorf("%q: expanded", c.want)
			continue
		}
		t.Logf("%q: %v", c.want, err)
	}
	s, tmpl := parse(t, strings.Replace(doc, "values: [0, 1, 2]\n", "values: [0, 1, -1]\n", 1))
	if _, err := Expand(s, tmpl); err == nil || !strings.Contains(err.Error(), "point mqtt-qos-1-clients1 (protocol=mqtt, qos=-1") ||
		!strings.Contains(err.Error(), "spec.qos") {
		t.Errorf("invalid point: %v", err)
	}
}

func TestSchedule(t *testing.T) {
	seq := Schedule(2, 2, v1alpha1.OrderSequential, 0)
	if !slices.Equal(seq, []Run{{0, 1}, {0, 2}, {1, 1}, {1, 2}}) {
		t.Errorf("sequential %v", seq)
	}
	a, b := Schedule(5, 3, v1alpha1.OrderInterleaved, 42), Schedule(5, 3, v1alpha1.OrderInterleaved, 42)
	if !slices.Equal(a, b) {
		t.Error("the same seed gave two orders")
	}
	if slices.Equal(a, Schedule(5, 3, v1alpha1.OrderInterleaved, 43)) {
		t.Error("another seed gave the same order")
	}
	for r := 0; r < 3; r++ { // each round is every point once, all of the round before the next
		var round []int
		for _, run := range a[5*r : 5*r+5] {
			if run.Repetition != r+1 {
				t.Fatalf("round %d holds %+v", r+1, run)
			}
			round = append(round, run.Point)
		}
		slices.Sort(round)
		if !slices.Equal(round, []int{0, 1, 2, 3, 4}) {
			t.Errorf("round %d: %v", r+1, round)
		}
	}
	var firsts [][]int
	for r := 0; r < 3; r++ {
		var order []int
		for _, run := range a[5*r : 5*r+5] {
			order = append(order, run.Point)
		}
		firsts = append(firsts, order)
	}
	if slices.Equal(firsts[0], firsts[1]) && slices.Equal(firsts[1], firsts[2]) {
		t.Errorf("every round in the same order %v: not shuffled per round", firsts[0])
	}
}

func TestExpandRefusesAnExplodingMatrix(t *testing.T) {
	axes := "  matrix:\n    axes:\n"
	for i, f := range []string{"workload.publishers", "workload.subscribers", "workload.payloadBytes", "workload.rate"} {
		axes += "    - field: " + f + "\n      values: ["
		for v := 1; v <= 10; v++ {
			if v > 1 {
				axes += ", "
			}
			axes += strconv.Itoa(v + 10*i)
		}
		axes += "]\n"
	}
	head, _, _ := strings.Cut(doc, "  matrix:")
	yaml := head + axes
	s, tmpl := parse(t, yaml)
	if _, err := Expand(s, tmpl); err == nil || !strings.Contains(err.Error(), "exceeds 1000 points") {
		t.Errorf("10^4 points: %v", err)
	}
	s, tmpl = parse(t, strings.Replace(doc, "repetitions: 3", "repetitions: 1000", 1))
	if _, err := Expand(s, tmpl); err == nil || !strings.Contains(err.Error(), "more than 10000 runs") {
		t.Errorf("15 points × 1000: %v", err)
	}
}

// TestExpandRefusesASuiteThatRunsNothing: excludes that remove every point of the axes (and no
// include) leave a suite of no run, refused here — by `msgbench run` and by the operator alike —
// naming the excludes, not run to an empty suite.json and a report.html never written (#31).
func TestExpandRefusesASuiteThatRunsNothing(t *testing.T) {
	head, _, _ := strings.Cut(doc, "  matrix:")
	for _, c := range []struct{ matrix, want string }{
		{"  matrix:\n    axes:\n    - field: qos\n      values: [0, 1]\n    exclude:\n    - {qos: 0}\n    - {qos: 1}\n",
			`spec.matrix.exclude: its 2 entries ({qos: 0}, {qos: 1}) remove every one of the 2 points of the axes`},
		{"  matrix:\n    axes:\n    - field: protocol\n      values: [mqtt, http]\n    - name: clients\n      fields: [workload.publishers, workload.subscribers]\n      values: [1, 16]\n    exclude:\n    - {clients: 1}\n    - {clients: 16}\n",
			`({clients: 1}, {clients: 16}) remove every one of the 4 points`},
	} {
		s, tmpl := parse(t, head+c.matrix)
		points, err := Expand(s, tmpl)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing to run") {
			t.Errorf("%d points, err %v; want %q", len(points), err, c.want)
		}
	}
	// An include next to excludes that remove every product point is a suite of one point.
	s, tmpl := parse(t, head+"  matrix:\n    axes:\n    - field: qos\n      values: [0, 1]\n    exclude:\n    - {qos: 0}\n    - {qos: 1}\n    include:\n    - {qos: 2}\n")
	if points, err := Expand(s, tmpl); err != nil || len(points) != 1 || points[0].Name != "qos2" {
		t.Errorf("excludes and one include: %v, %v", points, err)
	}
}
