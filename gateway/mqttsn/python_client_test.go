package mqttsn

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/testenv"
)

// pythonMQTTSN is the python of the virtual environment hack/mqttsn-python.sh installs mqtt-sn-12
// into (a Python MQTT-SN 1.2 client from PyPI, not written here; make setup runs it, cached under
// bin/tools), and the path of test/mqttsn/python_client.py, which drives it. Without python3,
// venv or PyPI the test skips, except in CI, where make setup must have installed it.
func pythonMQTTSN(t *testing.T) (python, script string) {
	t.Helper()
	return testenv.Install(t, "mqttsn-python.sh", "mqtt-sn-12"), filepath.Join(testenv.RepoRoot(), "test", "mqttsn", "python_client.py")
}

// pyLine is one line test/mqttsn/python_client.py prints.
type pyLine struct {
	TopicID    *int    `json:"topic_id"`
	Published  *int    `json:"published"`
	Subscribed *int    `json:"subscribed"`
	Topic      *string `json:"topic"`
	QoS        *int    `json:"qos"`
	Payload    *string `json:"payload"`
	raw        string
}

func (l pyLine) String() string { return l.raw }

// TestPythonClient: mqtt-sn-12, a Python MQTT-SN client from PyPI, through msgbench's MQTT-SN
// gateway in front of a real Mosquitto, in both gateway modes. It CONNECTs, REGISTERs a topic
// name and PUBLISHes 100 messages at QoS 0 and at QoS 1: an MQTT subscriber on the broker gets
// exactly those 100, in order, with their payloads, and nothing more. It SUBSCRIBEs to a topic
// name at QoS 0: 50 messages published on the broker reach it through the gateway, exactly, in
// order. (Its QoS 1 subscriptions are not tested: mqtt-sn-12 1.0.9 never acknowledges a QoS 1
// PUBLISH it receives — its polling() compares the QoS, 1, with the flag's bits, 0x20 — so the
// gateway retransmits until it gives the client up; docs/interop.md.)
func TestPythonClient(t *testing.T) {
	python, script := pythonMQTTSN(t)
	const published, delivered = 100, 50
	for _, mode := range []Mode{Transparent, Aggregating} {
		t.Run(string(mode), func(t *testing.T) {
			b := startBroker(t)
			g := startGateway(t, b.Addr, "127.0.0.1:0", Config{Mode: mode})
			host, port, _ := net.SplitHostPort(g.Addr().String())

			for _, qos := range []int{0, 1} {
				t.Run(fmt.Sprintf("publish-qos%d", qos), func(t *testing.T) {
					topic := fmt.Sprintf("python/%s/qos%d", mode, qos)
					sub := dialMQTT(t, b.Addr, fmt.Sprintf("go-sub-%s-%d", mode, qos))
					sub.subscribe(t, topic, 1)
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					prefix := fmt.Sprintf("py-%s-q%d", mode, qos)
					out, err := exec.CommandContext(ctx, python, script, "publish", host, port,
						fmt.Sprintf("py-pub-%s-%d", mode, qos), topic, fmt.Sprint(qos), fmt.Sprint(published), prefix).Output()
					if err != nil {
						t.Fatalf("python_client.py publish: %v%s\nstdout: %s", err, stderrOf(err), out)
					}
					var res pyLine
					if err := json.Unmarshal(out, &res); err != nil || res.Published == nil || *res.Published != published || res.TopicID == nil || *res.TopicID == 0 {
						t.Fatalf("python_client.py printed %q (%v); want %d published on a registered topic id", out, err, published)
					}
					for i := range published {
						p := sub.next(t, 5*time.Second)
						if want := fmt.Sprintf("%s-%d", prefix, i); string(p.Topic) != topic || string(p.Payload) != want {
							t.Fatalf("message %d on the broker: %s %q; want %s %q", i, p.Topic, p.Payload, topic, want)
						}
					}
					sub.none(t, 300*time.Millisecond)
					t.Logf("QoS %d: the Python client published %d on topic id %d; the broker's subscriber got %d of %d, in order, and no more",
						qos, published, *res.TopicID, published, published)
				})
			}

			t.Run("subscribe-qos0", func(t *testing.T) {
				topic := fmt.Sprintf("python/%s/down", mode)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, python, script, "subscribe", host, port,
					"py-sub-"+string(mode), topic, "0", fmt.Sprint(delivered), "20")
				var stderr strings.Builder
				cmd.Stderr = &stderr
				stdout, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				lines := make(chan pyLine, delivered+10)
				var wg sync.WaitGroup
				wg.Go(func() {
					defer close(lines)
					sc := bufio.NewScanner(stdout)
					for sc.Scan() {
						var l pyLine
						if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
							t.Errorf("python_client.py printed %q: %v", sc.Text(), err)
							continue
						}
						l.raw = sc.Text()
						lines <- l
					}
				})
				wait := func() error { wg.Wait(); return cmd.Wait() }
				select {
				case l, ok := <-lines:
					if !ok || l.Subscribed == nil || *l.Subscribed == 0 {
						t.Fatalf("python_client.py subscribe: first line %s (open %v), want its SUBACK's topic id; %v: %s", l, ok, wait(), stderr.String())
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("the Python client did not subscribe within 20s: %s", stderr.String())
				}
				pub := dialMQTT(t, b.Addr, "go-pub-"+string(mode))
				for i := range delivered {
					if _, err := pub.conn.Publish(topic, fmt.Appendf(nil, "down-%d", i), 1, false, true); err != nil {
						t.Fatal(err)
					}
				}
				got := 0
				for l := range lines {
					if l.Payload == nil {
						t.Errorf("unexpected line %s", l)
						continue
					}
					if want := fmt.Sprintf("down-%d", got); *l.Payload != want || l.Topic == nil || *l.Topic != topic || *l.QoS != 0 {
						t.Errorf("message %d at the Python client: %s; want %s %q at QoS 0", got, l, topic, want)
					}
					got++
				}
				if err := wait(); err != nil {
					t.Fatalf("python_client.py subscribe: %v: %s", err, stderr.String())
				}
				if got != delivered {
					t.Fatalf("the Python client got %d of %d messages published on the broker", got, delivered)
				}
				t.Logf("the Python client subscribed at QoS 0 and got %d of %d, in order", got, delivered)
			})
		})
	}
}

func stderrOf(err error) string {
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ": " + string(ee.Stderr)
	}
	return ""
}
