package loadgen_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/plan"
)

// payloadSpec has a group whose sizes are uniform between 100 and 900 bytes and a group whose
// messages are a JSON template, both read by one backend subscriber.
const payloadSpec = `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: payloads}
spec:
  protocol: mqtt
  qos: 1
  topics:
    - {name: sized, pattern: "payload/sized/{device}", devices: sized}
    - {name: json, pattern: "payload/json/{device}", devices: json}
  groups:
    - name: sized
      count: 4
      clientID: "{run}-sized-{index}"
      publish:
        topics: sized
        rate: 400
        payload: {size: {distribution: uniform, min: 100, max: 900}}
    - name: json
      count: 3
      clientID: "{run}-json-{index}"
      publish:
        topics: json
        rate: 150
        payload: {template: '{"id":"{device}","i":{index},"n":{counter},"t":{timestamp},"temp":21.5}'}
    - name: backend
      count: 1
      subscribe: {filter: "payload/#"}
  workload: {warmup: 500ms, duration: 2s}
`

// observed is a message as a client outside the run received it.
type observed struct {
	pub, seq uint32
	payload  []byte
}

// observe subscribes a client of its own to filter on the broker at addr and keeps every
// message it receives.
func observe(t *testing.T, addr, filter string) func() []observed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []observed
	c, err := mqtt.Connect(ctx, nc, mqtt.Options{
		Connect: mqtt.ConnectOptions{ClientID: "observer", CleanSession: true},
		OnPublish: func(p *mqtt.Publish) {
			o := observed{payload: slices.Clone(p.Payload)}
			if len(o.payload) >= loadgen.HeaderSize {
				o.pub, o.seq = binary.BigEndian.Uint32(o.payload[0:4]), binary.BigEndian.Uint32(o.payload[4:8])
			}
			mu.Lock()
			got = append(got, o)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Subscribe(ctx, mqtt.Subscription{Filter: filter, QoS: 1}); err != nil {
		t.Fatal(err)
	}
	return func() []observed {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// TestPayloadSizesAndTemplatesOnTheWire runs a group with uniform sizes and one with a JSON
// template against a real Mosquitto: the backend receives exactly what it expects, and a client
// of its own watching the same topics sees the sizes in [min, max] with the uniform
// distribution's mean, each publisher's sizes the ones its seeded generator draws (a run
// repeats them), and every template message the header followed by JSON naming its device, its
// index, its sequence number as counter and its send time.
func TestPayloadSizesAndTemplatesOnTheWire(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	mb, err := manifest.Parse([]byte(payloadSpec))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(&mb.Spec, plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	if p.Groups[0].PayloadBytes != 900 || p.Groups[2].PayloadBytes != 900 {
		t.Errorf("payloadBytes: sized %d, backend %d; want the largest size, 900", p.Groups[0].PayloadBytes, p.Groups[2].PayloadBytes)
	}
	seen := observe(t, b.Addr, "payload/#")
	start := time.Now()
	const runID = "r7"
	res, _ := runAny(t, loadgen.Options{Spec: &mb.Spec, Address: b.Addr, RunID: runID})
	if res.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", res.Phase, res.Message)
	}
	sized, js, backend := res.Group("sized"), res.Group("json"), res.Group("backend")
	if sized == nil || js == nil || backend == nil {
		t.Fatalf("groups %+v", res.Groups)
	}
	if backend.Expected != sized.Sent+js.Sent || backend.Received != backend.Expected || backend.Lost == nil || *backend.Lost != 0 || *res.Lost != 0 {
		t.Errorf("backend: expected %d (sent %d + %d), received %d, lost %v", backend.Expected, sized.Sent, js.Sent, backend.Received, backend.Lost)
	}

	// The observer got the warm-up's messages too, and every one was acknowledged by the time
	// the run ended; give the last deliveries a moment.
	deadline := time.Now().Add(5 * time.Second)
	var msgs []observed
	for {
		msgs = seen()
		var n int64
		for _, m := range msgs {
			if m.pub < 4 {
				n++
			}
		}
		if n >= sized.Sent || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	end := time.Now()

	sizes := map[uint32][]observed{} // by publisher id, sized group (ids 0-3)
	var sum, n float64
	lo, hi := 1<<30, 0
	templated := 0
	for _, m := range msgs {
		if m.pub < 4 {
			sizes[m.pub] = append(sizes[m.pub], m)
			l := len(m.payload)
			sum, n = sum+float64(l), n+1
			lo, hi = min(lo, l), max(hi, l)
			continue
		}
		// The json group: publishers 4 to 6, its devices 0 to 2.
		templated++
		var v struct {
			ID string  `json:"id"`
			I  int     `json:"i"`
			N  uint32  `json:"n"`
			T  int64   `json:"t"`
			X  float64 `json:"temp"`
		}
		index := int(m.pub) - 4
		if err := json.Unmarshal(m.payload[loadgen.HeaderSize:], &v); err != nil {
			t.Fatalf("publisher %d's message %d: %q: %v", m.pub, m.seq, m.payload[loadgen.HeaderSize:], err)
		}
		if v.ID != runID+"-json-"+strconv.Itoa(index) || v.I != index || v.N != m.seq || v.X != 21.5 ||
			v.T < start.Add(-time.Second).UnixMilli() || v.T > end.UnixMilli() {
			t.Errorf("publisher %d's message %d: %s; want device %s-json-%d, counter %d, a time in the run", m.pub, m.seq, m.payload[loadgen.HeaderSize:], runID, index, m.seq)
		}
	}
	if n < 500 || lo < 100 || hi > 900 || lo > 150 || hi < 850 {
		t.Errorf("uniform [100, 900]: %.0f messages from %d to %d bytes", n, lo, hi)
	}
	// Standard error of the mean: (800/√12)/√1000 ≈ 7 bytes.
	if mean := sum / n; mean < 470 || mean > 530 {
		t.Errorf("uniform [100, 900]: mean %.1f over %.0f messages, want 500±30", mean, n)
	}
	t.Logf("uniform: %.0f messages, %d..%d bytes, mean %.1f; %d template messages; sent %d + %d", n, lo, hi, sum/n, templated, sized.Sent, js.Sent)
	if templated < 300 {
		t.Errorf("%d template messages observed, want the json group's ~375", templated)
	}
	// Publisher i's sizes are what PCG(i, "sizes") draws, in sequence order (loadgen's
	// sizeSeedStream): the same in every run.
	d := p.Groups[0].Payload.Size
	for id, ms := range sizes {
		slices.SortFunc(ms, func(a, b observed) int { return int(a.seq) - int(b.seq) })
		r := rand.New(rand.NewPCG(uint64(id), 0x73697a6573))
		for k, m := range ms {
			if int(m.seq) != k {
				t.Fatalf("publisher %d: message %d missing from what the observer got", id, k)
			}
			if want := d.NextSize(r); len(m.payload) != want {
				t.Fatalf("publisher %d's message %d: %d bytes, its generator drew %d", id, k, len(m.payload), want)
			}
		}
	}
	if len(sizes) != 4 {
		t.Errorf("sizes from %d publishers, want 4", len(sizes))
	}
}
