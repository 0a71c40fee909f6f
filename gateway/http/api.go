package http

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/plan"
)

// Prefix is the path under which topics live: /topics/<topic>, the topic percent-encoded.
const Prefix = "/topics/"

// QoSHeader selects the MQTT QoS of a request (or the query parameter "qos"); the QoS of the
// gateway's groups is the default (settings.qos).
const QoSHeader = "Mqtt-Qos"

// api is the gateway's HTTP handler, shared by every HTTP version.
type api struct {
	o          gateway.Options
	limits     Limits
	settings   settings
	pools      *pools
	publishing chan struct{} // publish requests in flight (bounded)
	streams    chan struct{} // subscription streams open (bounded)
	closing    chan struct{}
	closeOnce  sync.Once
	subs       sync.WaitGroup
	// running totals for the metrics: publishes passed to the broker, deliveries written to
	// subscription streams, requests refused or failed
	in, out, failed atomic.Uint64
	// tooEarly counts requests answered 425 Too Early (earlyData): none of them is published.
	tooEarly atomic.Uint64
}

func newAPI(o gateway.Options, l Limits) (*api, error) {
	set, err := settingsOf(o.Groups)
	if err != nil {
		return nil, err
	}
	a := &api{
		o:          o,
		limits:     l,
		settings:   set,
		publishing: make(chan struct{}, l.MaxPublishes),
		streams:    make(chan struct{}, l.MaxSubscriptions),
		closing:    make(chan struct{}),
	}
	a.pools = newPools(o, l, set)
	return a, nil
}

// settings are what the gateway holds once for all its groups (gateway.Options.Groups).
type settings struct {
	// qos is a request's QoS when it names none: its groups' QoS. The drivers name theirs in
	// every request, so groups of different QoS leave the default at 1, the gateway's own.
	qos byte
	// mqttVersion is its broker connections' (mqtt.V311, mqtt.V5): the groups' GatewayOptions,
	// which must agree.
	mqttVersion byte
	// inflight is the most publishes a broker connection keeps unacknowledged: the largest
	// Inflight of the groups (20 without groups).
	inflight int
	// acceptEarly acts on requests that may be replayed (earlyData) instead of answering 425:
	// the groups' GatewayOptions.AcceptEarlyPublishes, which must agree (false without groups).
	acceptEarly bool
}

// settingsOf are the settings of a gateway serving groups (none: its defaults, QoS 1, MQTT
// 3.1.1 and an inflight window of 20).
func settingsOf(groups []plan.Group) (settings, error) {
	s := settings{qos: 1, mqttVersion: mqtt.V311, inflight: 20}
	if len(groups) == 0 {
		return s, nil
	}
	for i := range groups {
		if groups[i].HTTP == nil {
			return s, fmt.Errorf("http gateway: group %q is %s, not http (it has no HTTP options)", groups[i].Name, groups[i].Protocol)
		}
	}
	if q, err := gateway.Shared(groups, "spec.qos", func(g *plan.Group) int32 { return g.QoS }); err == nil && q >= 0 && q <= 2 {
		s.qos = byte(q)
	}
	version, err := gateway.Shared(groups, "spec.mqtt.version", func(g *plan.Group) v1alpha1.MQTTVersion {
		if g.GatewayOptions == nil || g.GatewayOptions.MQTTVersion == "" {
			return v1alpha1.MQTT311
		}
		return g.GatewayOptions.MQTTVersion
	})
	if err != nil {
		return s, fmt.Errorf("http gateway: %w", err)
	}
	if version == v1alpha1.MQTT5 {
		s.mqttVersion = mqtt.V5
	}
	if s.acceptEarly, err = gateway.Shared(groups, "spec.http.acceptEarlyPublishes", func(g *plan.Group) bool {
		return g.GatewayOptions != nil && g.GatewayOptions.AcceptEarlyPublishes
	}); err != nil {
		return s, fmt.Errorf("http gateway: %w", err)
	}
	s.inflight = 0
	for i := range groups {
		s.inflight = max(s.inflight, groups[i].Inflight, 1)
	}
	return s, nil
}

func (a *api) close() {
	a.closeOnce.Do(func() { close(a.closing) })
	a.subs.Wait()
	a.pools.close()
}

// noDate suppresses the Date header net/http adds: 37 bytes per response that say nothing here.
var noDate = []string(nil)

// fail answers with a status and a one-line reason.
func fail(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h["Date"] = noDate
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// ServeHTTP routes /topics/<topic> by method.
func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !a.settings.acceptEarly && earlyData(r) {
		// RFC 8470: a request that may be replayed is not acted on; the client retries it once
		// its handshake is done (a replayed copy's connection never completes one).
		a.tooEarly.Add(1)
		fail(w, http.StatusTooEarly, "425 Too Early: a "+r.Method+" sent in TLS early data (0-RTT) may be a replay; send it again once the handshake is complete (RFC 8470; the benchmark's spec.http.acceptEarlyPublishes accepts it)")
		return
	}
	path := r.URL.Path
	if !strings.HasPrefix(path, Prefix) {
		fail(w, http.StatusNotFound, "not found: topics live under /topics/<topic>")
		return
	}
	topic := path[len(Prefix):]
	if msg := checkTopic(topic); msg != "" {
		fail(w, http.StatusBadRequest, msg)
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET, POST")
		fail(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed: POST publishes, GET subscribes")
		return
	}
	qos, ok := requestQoS(r, a.settings.qos)
	if !ok {
		fail(w, http.StatusBadRequest, "bad QoS: the "+QoSHeader+" header or qos parameter must be 0, 1 or 2")
		return
	}
	user, pass, ok := credentials(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="msgbench"`)
		fail(w, http.StatusUnauthorized, "malformed Authorization header: only Basic credentials are passed to the broker")
		return
	}
	if r.Method == http.MethodPost {
		a.publish(w, r, topic, qos, user, pass)
	} else {
		a.subscribe(w, r, topic, qos, user, pass)
	}
}

// checkTopic returns why a topic name cannot be used, or "".
func checkTopic(t string) string {
	switch {
	case t == "":
		return "empty topic: use /topics/<topic>"
	case len(t) > 65535:
		return "topic longer than 65535 bytes"
	case !utf8.ValidString(t):
		return "topic is not valid UTF-8"
	case strings.ContainsAny(t, "+#\x00"):
		return "topic must not contain '+', '#' or NUL: publish and subscribe name one exact topic"
	}
	return ""
}

// requestQoS reads the QoS header, then the qos query parameter, else def.
func requestQoS(r *http.Request, def byte) (byte, bool) {
	v := ""
	if hv := r.Header[QoSHeader]; len(hv) > 0 {
		v = hv[0]
	} else if r.URL.RawQuery != "" {
		var ok bool
		if v, ok = queryValue(r.URL.RawQuery, "qos"); !ok {
			return 0, false
		}
	}
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 2 {
		return 0, false
	}
	return byte(n), true
}

// queryValue finds one parameter in a raw query without building url.Values (a map and
// strings per request on the publish path); ok is false for a bad escape in its value.
func queryValue(raw, key string) (string, bool) {
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(kv, "=")
		if k != key {
			continue
		}
		if strings.ContainsAny(v, "%+") {
			u, err := url.QueryUnescape(v)
			return u, err == nil
		}
		return v, true
	}
	return "", true
}

// credentials returns Basic credentials (empty without an Authorization header); ok is false
// for an Authorization header that is not well-formed Basic.
func credentials(r *http.Request) (user, pass string, ok bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", "", true
	}
	const prefix = "Basic "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(h[len(prefix):])
	if err != nil {
		return "", "", false
	}
	user, pass, found := strings.Cut(string(raw), ":")
	return user, pass, found && user != ""
}

// acquire takes a slot of sem without waiting.
func acquire(sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
		return false
	}
}
