package localrun

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/netem/emulator"
)

// TestBurstLossRunReportsWhatTheLinkDid runs MQTT at QoS 1 over a downlink with Gilbert-Elliott
// loss: nothing is lost to the application (TCP and QoS 1 recover), and the result's
// network.packets says what the link did, which can be held against the model — the downlink's
// loss rate near the stationary 1.96 % and its mean loss burst near 1/r = 2 packets (within what
// chance allows for the packets sent), every loss in the bad state, the uplink untouched.
func TestBurstLossRunReportsWhatTheLinkDid(t *testing.T) {
	if err := emulator.CheckPrivileges(); err != nil {
		t.Skip(err)
	}
	mb, err := manifest.Parse([]byte(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: bursty}
spec:
  protocol: mqtt
  qos: 1
  timeout: 2m
  network:
    profile: custom
    delay: 1ms
    down:
      gilbertElliott: {goodToBadPercent: "1", badToGoodPercent: "50"}
  workload: {publishers: 2, subscribers: 2, topics: 2, payloadBytes: 64, rate: 1000, duration: 4s, warmup: 500ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	res, err := Run(context.Background(), mb, Options{Logf: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if res.Phase != "Succeeded" || res.Lost == nil || *res.Lost != 0 {
		t.Fatalf("phase %s, lost %v: %s\n%s", res.Phase, res.Lost, res.Message, log.String())
	}
	// Read back as a user would: from the result's JSON.
	data, err := json.Marshal(res.Network)
	if err != nil {
		t.Fatal(err)
	}
	var network struct {
		Packets map[string]struct {
			Packets, Lost, LossBursts, LostInBadState float64
			LostPercent, MeanLossBurst                float64
		}
	}
	if err := json.Unmarshal(data, &network); err != nil {
		t.Fatal(err)
	}
	up, down := network.Packets["up"], network.Packets["down"]
	t.Logf("down: %+v; up: %+v", down, up)
	if down.Packets < 5000 || up.Packets < 5000 {
		t.Fatalf("too few packets to judge: %s", data)
	}
	// Within 4.5 standard deviations of the model, for the packets this run sent: a loss burst
	// starts at a good-state packet with p = 1 %, so about N·0.98·0.01 bursts (± √ of that), each of geometric
	// length (r = 50 %: mean 2, variance 2), and the losses are their sum (variance bursts·(2+4)).
	// A fixed ±30 % failed once in some hundred runs: 121 lost of 9132 (−2.5 σ).
	bursts := down.Packets * (50.0 / 51) * 0.01
	lostSD, burstSD := math.Sqrt(bursts*6), math.Sqrt(2/max(down.LossBursts, 1))
	if math.Abs(down.Lost-2*bursts) > 4.5*lostSD || math.Abs(down.LossBursts-bursts) > 4.5*math.Sqrt(bursts) || math.Abs(down.MeanLossBurst-2) > 4.5*burstSD {
		t.Errorf("downlink lost %.0f of %.0f packets (%.3f%%) in %.0f bursts of %.2f; the model gives %.0f ± %.0f (1.961%%) in %.0f ± %.0f bursts of 2 ± %.2f",
			down.Lost, down.Packets, down.LostPercent, down.LossBursts, down.MeanLossBurst, 2*bursts, lostSD, bursts, math.Sqrt(bursts), burstSD)
	}
	if down.LostInBadState != down.Lost || up.Lost != 0 || down.Lost/down.LossBursts != down.MeanLossBurst {
		t.Errorf("counters inconsistent: %s", data)
	}
}
