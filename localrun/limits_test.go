package localrun

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/manifest"
)

// hardNoFile is this machine's hard open-files limit; the test skips where it is so high that a
// refused fleet would be unreasonably large to describe.
func hardNoFile(t *testing.T) int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Fatal(err)
	}
	if r.Max > 1<<20 {
		t.Skipf("hard RLIMIT_NOFILE %d: no fleet worth refusing", r.Max)
	}
	return int(r.Max)
}

func fleet(t *testing.T, publishers, subscribers, workers int) *v1alpha1.MessagingBenchmark {
	t.Helper()
	mb, err := manifest.Parse([]byte(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: fleet}
spec:
  protocol: mqtt
  workload: {publishers: ` + strconv.Itoa(publishers) + `, subscribers: ` + strconv.Itoa(subscribers) + `, topics: 100, duration: 10s}
  workers: {replicas: ` + strconv.Itoa(workers) + `}
`))
	if err != nil {
		t.Fatal(err)
	}
	return mb
}

// A fleet beyond the open-files limit is refused by Check, before anything starts, naming the
// limit and how to split; one whose broker alone is beyond it names the broker; one that fits
// passes. On this machine (hard limit 20,000): 30,000 publishers in one worker, and 12,000 +
// 12,000 clients in two worker processes.
func TestCheckRefusesFleetsBeyondTheLimits(t *testing.T) {
	hard := hardNoFile(t)
	if _, err := Check(&fleet(t, 200, 200, 2).Spec, Options{}); err != nil {
		t.Fatalf("a small fleet is refused: %v", err)
	}
	start := time.Now()
	_, err := Check(&fleet(t, hard+10000, 0, 1).Spec, Options{})
	if took := time.Since(start); took > time.Second {
		t.Errorf("Check took %s", took)
	}
	if err == nil || !strings.Contains(err.Error(), "open files in the msgbench process") || !strings.Contains(err.Error(), "(RLIMIT_NOFILE)") ||
		!strings.Contains(err.Error(), "--set workers.replicas=2") {
		t.Fatalf("%d publishers in one worker: %v", hard+10000, err)
	}

	if _, err := mosquitto.Binary(); err != nil {
		t.Skipf("the broker line is Mosquitto's: %v", err)
	}
	half := hard/2 + 2000
	_, err = Check(&fleet(t, half, half, 2).Spec, Options{})
	if err == nil || !strings.Contains(err.Error(), "open files in the broker process (") || !strings.Contains(err.Error(), "one file per connection: at most") {
		t.Fatalf("%d + %d clients in two workers: %v", half, half, err)
	}
	if strings.Contains(err.Error(), "worker process") {
		t.Errorf("two worker processes fit, yet: %v", err)
	}

}
