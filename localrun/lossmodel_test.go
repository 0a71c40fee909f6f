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
// loss rate near the stationary 1.96 % and its mean loss burst near 1/r = 2 packets, every loss
// in the bad state, the uplink untouched.
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
	if math.Abs(down.LostPercent/1.9608-1) > 0.3 || math.Abs(down.MeanLossBurst/2-1) > 0.3 {
		t.Errorf("downlink lost %.3f%% in bursts of %.2f; the model gives 1.961%% in bursts of 2", down.LostPercent, down.MeanLossBurst)
	}
	if down.LostInBadState != down.Lost || up.Lost != 0 || down.Lost/down.LossBursts != down.MeanLossBurst {
		t.Errorf("counters inconsistent: %s", data)
	}
}
