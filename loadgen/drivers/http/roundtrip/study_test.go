package roundtrip_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	gwhttp "github.com/msgbench/msgbench/gateway/http"
	gwquic "github.com/msgbench/msgbench/gateway/quic"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/loadgen"
	_ "github.com/msgbench/msgbench/loadgen/drivers/all"
	"github.com/msgbench/msgbench/loadgen/drivers/http/roundtrip"
	"github.com/msgbench/msgbench/results"
)

// The study benchmark runs each role in its own process — this test binary re-executed with
// MSGBENCH_ROLE set — so that CPU and peak RSS are the load generator's, the gateway's and the
// broker's alone, not the proxy's or the test's.
func TestMain(m *testing.M) {
	if role := os.Getenv("MSGBENCH_ROLE"); role != "" {
		if err := child(role); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child runs one role; servers print their address on stdout and run until killed.
func child(role string) error {
	ctx := context.Background()
	env := os.Getenv
	switch role {
	case "gateway-http", "gateway-quic":
		bundle := &certs.Bundle{}
		var err error
		if bundle.ServerCert, err = os.ReadFile(env("CERT")); err != nil {
			return err
		}
		if bundle.ServerKey, err = os.ReadFile(env("KEY")); err != nil {
			return err
		}
		srv, err := bundle.ServerTLS()
		if err != nil {
			return err
		}
		o := gateway.Options{Listen: "127.0.0.1:0", Broker: env("BROKER"), TLS: srv}
		var addr string
		if role == "gateway-http" {
			g, err := gwhttp.Start(ctx, o, gwhttp.Limits{})
			if err != nil {
				return err
			}
			addr = g.HTTP3Addr().String()
		} else {
			g, err := gwquic.Start(ctx, o)
			if err != nil {
				return err
			}
			addr = g.Addr().String()
		}
		fmt.Println(addr)
		select {}
	case "proxy":
		up, _ := time.ParseDuration(env("UP"))
		down, _ := time.ParseDuration(env("DOWN"))
		l := roundtrip.Link{Up: up, Down: down}
		if env("UDP") == "1" {
			p, err := roundtrip.NewUDPProxy(env("TARGET"), l)
			if err != nil {
				return err
			}
			fmt.Println(p.Addr())
		} else {
			p, err := roundtrip.NewTCPProxy(env("TARGET"), l)
			if err != nil {
				return err
			}
			fmt.Println(p.Addr())
		}
		select {}
	case "loadgen":
		var spec v1alpha1.MessagingBenchmarkSpec
		b, err := os.ReadFile(env("SPEC"))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &spec); err != nil {
			return err
		}
		up, _ := time.ParseDuration(env("UP"))
		down, _ := time.ParseDuration(env("DOWN"))
		o := loadgen.Options{Name: "study", Spec: &spec, Address: env("ADDRESS"), Dial: roundtrip.Dialer(roundtrip.Link{Up: up, Down: down})}
		if ca := env("CA"); ca != "" {
			caPEM, err := os.ReadFile(ca)
			if err != nil {
				return err
			}
			if o.TLS, err = certs.ClientTLS(caPEM, "127.0.0.1", "1.3"); err != nil {
				return err
			}
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		res, err := loadgen.Run(ctx, o)
		if err != nil {
			return err
		}
		return res.WriteFile(env("OUT"))
	}
	return fmt.Errorf("unknown role %q", role)
}

// spawn starts this binary in a role and returns the process and the address it printed.
func spawn(t *testing.T, role string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, "MSGBENCH_ROLE="+role)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Stop(cmd, time.Second) })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %v", role, err)
	}
	return cmd, strings.TrimSpace(line)
}

// TestStudyNBIoT is study 2's comparison on an NB-IoT-like delay (200 ms up, 400 ms down, no
// loss or rate limit): MQTT over TCP, MQTT over QUIC and HTTP/3 at 1, 2, 5 and 10 KB, the
// sample's workload (5 publishers started 1 s apart, 100 QoS 1 messages). It prints a table;
// run it with MSGBENCH_STUDY=1 (docs/benchmarks-http.md). MSGBENCH_STUDY_UP/_DOWN (durations),
// _SIZES (bytes, comma-separated) and _INFLIGHT (spec.mqtt.inflight, default 20) change it.
func TestStudyNBIoT(t *testing.T) {
	if os.Getenv("MSGBENCH_STUDY") == "" {
		t.Skip("a benchmark: set MSGBENCH_STUDY=1")
	}
	up, down := 200*time.Millisecond, 400*time.Millisecond
	if v := os.Getenv("MSGBENCH_STUDY_UP"); v != "" {
		up, _ = time.ParseDuration(v)
	}
	if v := os.Getenv("MSGBENCH_STUDY_DOWN"); v != "" {
		down, _ = time.ParseDuration(v)
	}
	rtt := up + down
	dir := t.TempDir()
	bundle, err := certs.New("gw", []string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"ca.crt": bundle.CACert, "tls.crt": bundle.ServerCert, "tls.key": bundle.ServerKey}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sizes := []int32{1024, 2048, 5120, 10240}
	if v := os.Getenv("MSGBENCH_STUDY_SIZES"); v != "" {
		sizes = nil
		for _, s := range strings.Split(v, ",") {
			n, _ := strconv.Atoi(s)
			sizes = append(sizes, int32(n))
		}
	}
	fmt.Printf("link: %v up, %v down (RTT %v), no loss, no rate limit; 5 publishers 1 s apart, 5 subscribers, 100 QoS 1 messages\n", up, down, rtt)
	fmt.Printf("%-10s %6s %16s %12s %9s %9s %11s %9s %9s %10s %9s %9s\n", "protocol", "bytes", "first msg p50", "completion", "B/msg", "dgram/msg",
		"client CPU", "client MB", "gw CPU", "gw MB", "broker CPU", "lost")
	for _, protocol := range []string{"mqtt", "mqtt-quic", "http3"} {
		for _, size := range sizes {
			runStudy(t, dir, protocol, size, up, down)
		}
	}
}

func runStudy(t *testing.T, dir, protocol string, size int32, up, down time.Duration) {
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Stop() }()
	spec := v1alpha1.MessagingBenchmarkSpec{
		Protocol: v1alpha1.ProtocolMQTT, QoS: 1,
		MQTT:    v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 20},
		HTTP:    v1alpha1.HTTPSpec{Version: v1alpha1.HTTP3},
		Workers: v1alpha1.WorkersSpec{Replicas: 1},
		Workload: v1alpha1.WorkloadSpec{Publishers: 5, Subscribers: 5, Topics: 5, TopicPrefix: "nbiot-", PayloadBytes: size,
			Messages: 100, ConnectRate: 1, Duration: metav1.Duration{Duration: time.Minute},
			TimelineInterval: metav1.Duration{Duration: 200 * time.Millisecond}},
	}
	if v := os.Getenv("MSGBENCH_STUDY_INFLIGHT"); v != "" {
		n, _ := strconv.Atoi(v)
		spec.MQTT.Inflight = int32(n)
	}
	target, udp, ca := b.Addr, false, ""
	var gw *exec.Cmd
	gwEnv := []string{"BROKER=" + b.Addr, "CERT=" + filepath.Join(dir, "tls.crt"), "KEY=" + filepath.Join(dir, "tls.key")}
	switch protocol {
	case "mqtt-quic":
		spec.Protocol = v1alpha1.ProtocolMQTTQUIC
		gw, target = spawn(t, "gateway-quic", gwEnv...)
		udp, ca = true, filepath.Join(dir, "ca.crt")
	case "http3":
		spec.Protocol = v1alpha1.ProtocolHTTP
		gw, target = spawn(t, "gateway-http", gwEnv...)
		udp, ca = true, filepath.Join(dir, "ca.crt")
	}
	udpFlag := "0"
	if udp {
		udpFlag = "1"
	}
	px, addr := spawn(t, "proxy", "TARGET="+target, "UDP="+udpFlag, "UP="+up.String(), "DOWN="+down.String())
	specFile, outFile := filepath.Join(dir, "spec.json"), filepath.Join(dir, "result.json")
	js, _ := json.Marshal(spec)
	if err := os.WriteFile(specFile, js, 0o600); err != nil {
		t.Fatal(err)
	}
	b0, _ := b.Usage()
	var g0 proc.Usage
	if gw != nil {
		g0, _ = proc.Of(gw.Process.Pid)
	}
	lg := exec.Command(os.Args[0], "-test.run=^$")
	lg.Env = append(os.Environ(), "MSGBENCH_ROLE=loadgen", "SPEC="+specFile, "OUT="+outFile, "ADDRESS="+addr, "CA="+ca, "UP="+up.String(), "DOWN="+down.String())
	lg.Stderr = os.Stderr
	if err := lg.Run(); err != nil {
		t.Fatalf("%s %d: loadgen: %v", protocol, size, err)
	}
	b1, _ := b.Usage()
	var g1 proc.Usage
	if gw != nil {
		g1, _ = proc.Of(gw.Process.Pid)
	}
	_ = proc.Stop(px, time.Second)
	res, err := results.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	rtt := up + down
	fm := time.Duration(res.Latency.FirstMessage.P50Micros) * time.Microsecond
	dgram := "-"
	if res.Wire.DatagramsSent != nil && res.Received > 0 {
		dgram = fmt.Sprintf("%.1f", float64(*res.Wire.DatagramsSent+*res.Wire.DatagramsReceived)/float64(res.Received))
	}
	gwCPU, gwMB := "-", "-"
	if gw != nil {
		gwCPU, gwMB = fmt.Sprintf("%.2fs", (g1.CPU-g0.CPU).Seconds()), fmt.Sprintf("%.1f", float64(g1.PeakRSS)/(1<<20))
	}
	fmt.Printf("%-10s %6d %9.0fms %4.2fR %11.2fs %9.0f %9s %10.2fs %9.1f %9s %10s %9.2fs %9d\n", protocol, size,
		float64(fm.Milliseconds()), float64(fm)/float64(rtt), res.MeasuredSeconds, *res.Wire.BytesPerMessage, dgram,
		res.Resources.LoadgenCPUSeconds, float64(res.Resources.LoadgenMaxRSSBytes)/(1<<20), gwCPU, gwMB, (b1.CPU - b0.CPU).Seconds(), *res.Lost)
	if gw != nil {
		_ = proc.Stop(gw, time.Second)
	}
}
