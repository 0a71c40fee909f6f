package localrun

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/msgbench/msgbench/internal/manifest"
)

// TestHTTPEndpointOfYourOwn: a manifest whose publishers send to an HTTP ingestion endpoint of
// the user's own, described by a request template (spec.http.endpoint): every request carries
// the method, path, headers and body the template says — the device's id, its topic, its message
// number, the payload base64-encoded in JSON — over HTTP/1.1 and HTTP/2 (h2c); the run counts
// the requests the endpoint accepted (its acceptedStatuses) and the others as errors, and no
// delivery as lost: with no subscribers, what the endpoint does next is not measured. The
// endpoint is Go's net/http server, rejecting every fifth message of each device with 503.
func TestHTTPEndpointOfYourOwn(t *testing.T) {
	type request struct {
		device, topic, key string
		seq                int
		payload            []byte
	}
	var mu sync.Mutex
	var got []request
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/devices/{device}/readings", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Topic, Data string
			Seq         int
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		payload, err := base64.StdEncoding.DecodeString(body.Data)
		seq, _ := strconv.Atoi(r.URL.Query().Get("seq"))
		if err != nil || seq != body.Seq {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, request{device: r.PathValue("device"), topic: body.Topic, key: r.Header.Get("X-Api-Key"), seq: seq, payload: payload})
		mu.Unlock()
		if seq%5 == 4 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	for _, version := range []string{"1.1", "2"} {
		t.Run("http-"+version, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			doc := fmt.Sprintf(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: http-endpoint}
spec:
  protocol: http
  qos: 1
  http:
    version: %q
    endpoint:
      method: PUT
      url: "http://%s/v1/devices/{device}/readings?seq={seq}"
      headers: {X-Api-Key: "key-{device}", Content-Type: application/json}
      body: '{"topic": "{topic}", "seq": {seq}, "data": "{payload:base64}"}'
      acceptedStatuses: [202]
  workload: {publishers: 3, subscribers: 0, topics: 3, topicPrefix: plant/, payloadBytes: 48, rate: 30, warmup: 1s, duration: 2s}
`, version, ln.Addr())
			mb, err := manifest.Parse([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), mb, Options{Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			t.Logf("phase %s, sent %d, acked %d, errors %d; the endpoint saw %d requests", res.Phase, res.Sent, res.Acked, res.Errors, len(got))
			var refused int64
			devices := map[string]bool{}
			for _, r := range got {
				devices[r.device] = true
				if r.key != "key-"+r.device || !strings.HasPrefix(r.topic, "plant/") || len(r.payload) != 48 {
					t.Fatalf("request %+v: not what the template says", r)
				}
				if r.seq%5 == 4 {
					refused++
				}
			}
			if len(devices) != 3 {
				t.Errorf("requests from %d devices, want the 3 publishers", len(devices))
			}
			// The window's messages: each answered, 202 acknowledged, 503 an error. Requests of
			// the warm-up count at the endpoint, not in the window.
			if res.Sent == 0 || res.Acked+res.Errors != res.Sent || res.Errors == 0 || int64(len(got)) < res.Sent {
				t.Errorf("sent %d, acked %d, errors %d, the endpoint saw %d (%d refused): want every message answered, the 503s errors",
					res.Sent, res.Acked, res.Errors, len(got), refused)
			}
			// The refusals are explained: the status, and what to change for it.
			if !strings.Contains(res.Message, "the endpoint answered 503 Service Unavailable") || !strings.Contains(res.Message, "workload.rate") {
				t.Errorf("message %q does not explain the 503s", res.Message)
			}
			if res.Received != 0 || res.Expected != 0 || res.Latency.PublishAck == nil {
				t.Errorf("received %d of %d expected, publish-ack %v: an endpoint's deliveries are not observed, its answers are", res.Received, res.Expected, res.Latency.PublishAck)
			}
			if !strings.Contains(res.Environment.Gateway, ln.Addr().String()) {
				t.Errorf("environment gateway %q, want the endpoint", res.Environment.Gateway)
			}
		})
	}
}
