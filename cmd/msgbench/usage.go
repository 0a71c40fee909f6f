package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/msgbench/msgbench/internal/metricserver"
	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/internal/wsconn"
	"github.com/msgbench/msgbench/loadgen"
)

func newUsageCommand() *cobra.Command {
	var listen, component, readyMQTT string
	var in planInput
	cmd := &cobra.Command{
		Use:   "usage --listen HOST:PORT (--plan plan.json | -f FILE) [--component broker]",
		Short: "Serve the CPU time and memory of the other processes in this pod (the broker's usage sidecar)",
		Long: `Runs beside a broker in a pod that shares its process namespace (the operator adds it to the
broker pods it creates) and serves what the broker's processes used, read every 200 ms (CPU
from each process's CPU-time clock, in ns, or its container's cgroup v2 cpu.stat usage_usec
where visible, in µs; memory from /proc): /usage as JSON, with the CPU figure's resolution for the workers, which ask what it was when the measured window opened
and closed (?at=UNIX-NANOSECONDS, interpolated between samples), and /metrics for Prometheus
(msgbench_component_*). With --ready-mqtt, /readyz answers 200 only while the broker accepts an
MQTT CONNECT, so the pod is ready when its broker serves MQTT, whatever the broker's image holds.
It needs no privilege and no Kubernetes API access.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := in.read()
			if err != nil {
				return err
			}
			if _, err := proc.Others(); err != nil {
				return err
			}
			srv, err := metricserver.Listen(listen)
			if err != nil {
				return err
			}
			defer srv.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			sampler := proc.NewSampler(ctx, proc.Others, proc.SampleInterval, proc.SampleKeep)
			srv.Registry.MustRegister(proc.NewCollector(sampler.Now, loadgen.LabelsOf(p, 0).Component(component)))
			srv.Handle("/usage", proc.UsageHandler(sampler))
			srv.Handle("/readyz", readyHandler(readyMQTT))
			fmt.Fprintf(cmd.ErrOrStderr(), "msgbench usage: serving the %s's usage on %s (/usage, /metrics)\n", component, srv.Addr())
			<-ctx.Done()
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", ":9464", "host:port to serve /usage and /metrics on")
	in.flags(fl, "(its name and namespace label the metrics)")
	fl.StringVar(&component, "component", "broker", "what the other processes are, for the metrics' component label")
	fl.StringVar(&readyMQTT, "ready-mqtt", "", "host:port of an MQTT broker, or ws://host:port/path of its MQTT-over-WebSocket endpoint: /readyz answers 200 only while it accepts an MQTT CONNECT (the broker pod's readiness)")
	return cmd
}

// probeReady probes an MQTT broker at host:port, or through the WebSocket upgrade at
// ws://host:port/path.
func probeReady(ctx context.Context, addr string) error {
	if rest, ok := strings.CutPrefix(addr, "ws://"); ok {
		host, path, _ := strings.Cut(rest, "/")
		return mqtt.Probe(ctx, wsconn.Dialer(nil, nil, "/"+path), host, nil)
	}
	return mqtt.Probe(ctx, nil, addr, nil)
}

// readyHandler answers 200 when the broker at addr completes an MQTT CONNECT/CONNACK within 2 s
// (always, when addr is ""), else 503 with the reason.
func readyHandler(addr string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if addr != "" {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			if err := probeReady(ctx, addr); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = io.WriteString(w, "ok\n")
	})
}
