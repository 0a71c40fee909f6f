package mqtt

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/internal/refusal"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
)

// What the driver makes of a broker's "no" (internal/refusal words it): a reason code with
// the client and packet it refused, and a connection closed before CONNACK or during the TLS
// handshake diagnosed by one probe per driver — a TLS handshake, or a 3.1.1 CONNECT, to the
// same address — so that the message says what the broker speaks instead of "EOF".

// diagnosis probes, once per driver, what a broker that closed a connection before CONNACK or
// in the TLS handshake speaks (only over TCP, TCPTransport's address).
type diagnosis struct {
	cfg  drivers.Config
	once sync.Once
	// explain is what the probe found; nil: nothing to say beyond the error.
	explain func(err error) error
}

// probeTimeout bounds each probe.
const probeTimeout = 3 * time.Second

// field names a field of the group's, spec.<flat> in a flat spec, spec.groups[name].<group> in a
// run with device groups.
func field(g *plan.Group, flat, group string) string {
	if g != nil && g.Fleet != nil {
		return fmt.Sprintf("spec.groups[%s].%s", g.Name, group)
	}
	return "spec." + flat
}

// explainEarlyClose explains err, a connection the broker closed before CONNACK (handshake
// false) or during the TLS handshake (handshake true); err unchanged when it is no such close or
// the probe found nothing.
func (d *driver) explainEarlyClose(ctx context.Context, err error, handshake bool) error {
	// The server's word on the client's certificate (TLS 1.3 sends it after the client's
	// Finished: it arrives with the CONNACK read).
	if d.cfg.TLS != nil {
		if e := refusal.ClientCertificate(d.cfg.Address, err, d.cfg.ClientCerts != nil, "spec.tls.clientCertificates"); e != nil {
			return e
		}
	}
	if d.diag == nil {
		return err
	}
	if handshake && !refusal.NotTLSReply(err) || !handshake && !refusal.ClosedEarly(err) {
		return err
	}
	dg := d.diag
	dg.once.Do(func() { dg.explain = d.probe(context.WithoutCancel(ctx), handshake) })
	if dg.explain == nil {
		return err
	}
	return dg.explain(err)
}

// probe finds what the broker at the driver's address speaks.
func (d *driver) probe(ctx context.Context, handshake bool) func(error) error {
	cfg := d.diag.cfg
	dial := cfg.Dialer()
	plainMQTT := func() bool {
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		return mqtt.Probe(ctx, dial, cfg.Address, nil) == nil
	}
	if cfg.TLS != nil && !handshake {
		// Over TLS 1.3 the server judges the client's certificate after the client's Finished,
		// and its alert is lost when the client's CONNECT meets the closed socket first (a
		// reset): a handshake of its own, then a read, hears it.
		if alert := certAlert(ctx, dial, cfg.Address, drivers.NewClientTLS(cfg.TLS, cfg).For("msgbench-probe")); alert != nil {
			if e := refusal.ClientCertificate(cfg.Address, alert, cfg.ClientCerts != nil, "spec.tls.clientCertificates"); e != nil {
				return func(error) error { return e }
			}
		}
	}
	switch {
	case handshake: // a TLS client; the handshake got no TLS answer
		plain := plainMQTT()
		return func(err error) error {
			var rh tls.RecordHeaderError
			if !plain && !errors.As(err, &rh) {
				return err // closed, and no plain MQTT either: nothing certain to say
			}
			return refusal.NotTLS(cfg.Address, err, plain)
		}
	case cfg.TLS == nil && servesTLS(ctx, dial, cfg.Address):
		return func(err error) error { return refusal.ExpectsTLS(cfg.Address, err) }
	case d.version == mqtt.V5:
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		var tc *tls.Config
		if cfg.TLS != nil {
			tc = cfg.TLS.Clone()
		}
		speaks311 := mqtt.Probe(ctx, dial, cfg.Address, tc) == nil
		versionField := field(cfg.Group, "mqtt.version", "mqtt.version")
		return func(err error) error { return refusal.NotMQTT5(err, speaks311, versionField) }
	}
	return nil
}

// certAlert is the alert the TLS server at address sends a client with tc once the handshake is
// done, nil when it sends none within the probe's time.
func certAlert(ctx context.Context, dial drivers.DialFunc, address string, tc *tls.Config) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	nc, err := dial(ctx, "tcp", address)
	if err != nil {
		return nil
	}
	defer nc.Close()
	c := tls.Client(nc, tc)
	if err := c.HandshakeContext(ctx); err != nil {
		return err
	}
	deadline, _ := ctx.Deadline()
	_ = nc.SetReadDeadline(deadline)
	if _, err := c.Read(make([]byte, 1)); err != nil {
		return err
	}
	return nil
}

// servesTLS reports whether address completes a TLS handshake (its certificate is not checked:
// the question is only whether it speaks TLS).
func servesTLS(ctx context.Context, dial drivers.DialFunc, address string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	nc, err := dial(ctx, "tcp", address)
	if err != nil {
		return false
	}
	defer nc.Close()
	tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a probe of the protocol, no data is sent
	return tc.HandshakeContext(ctx) == nil
}

// refusedBy gives a refusal in err the client's (and the packet's) detail, once; and explains an
// MQTT 3.1.1 publisher's connection the broker closed before it acknowledged any publish.
func (s *session) refusedBy(err error) error {
	var re *refusal.Error
	if err != nil && s.version != mqtt.V5 && s.publishBytes > 0 && s.qos > 0 && !s.acked.Load() && refusal.ClosedEarly(err) && !errors.As(err, &re) {
		return &refusal.Error{
			What:   "the broker closed the connection after the publisher's first PUBLISH, before acknowledging any",
			Detail: fmt.Sprintf("client %s, PUBLISH of %d bytes to %s", s.id, s.publishBytes, s.topic),
			Advice: "an MQTT 3.1.1 broker closes a connection that breaks one of its rules without saying which; most often a packet over its maximum size " +
				"(Mosquitto: max_packet_size; lower the payload, spec.workload.payloadBytes or spec.groups[].publish.payloadBytes, or raise the limit) " +
				`or a topic its access control forbids; with spec.mqtt.version "5" the broker says why`,
			Err: err,
		}
	}
	if err == nil || !errors.As(err, &re) || re.Detail != "" {
		return err
	}
	withDetail := *re
	withDetail.Detail = "client " + s.id
	if s.publishBytes > 0 {
		withDetail.Detail += fmt.Sprintf(", whose PUBLISHes are up to %d bytes", s.publishBytes)
	}
	return &withDetail
}

// ackRefused records the first publish the broker refused in an acknowledgement (reason code
// 0x80 or above), which Drain returns.
func (s *session) ackRefused(reason byte) {
	if s.refused.Load() != nil {
		return
	}
	packet := refusal.PUBACK
	if s.qos == 2 {
		packet = refusal.PUBREC
	}
	detail := fmt.Sprintf("client %s, PUBLISH of %d bytes to %s", s.id, s.publishBytes, s.topic)
	s.refused.CompareAndSwap(nil, refusal.Explain(s.version, packet, reason, "", detail))
}

// checkPacketSize refuses a publisher whose PUBLISH exceeds the broker's MQTT 5 Maximum Packet
// Size (its CONNACK): the broker would disconnect it at its first message.
func (d *driver) checkPacketSize(c drivers.Client, conn *mqtt.Conn, size int) error {
	limit := conn.Connack().MaximumPacketSize
	if d.version != mqtt.V5 || limit == 0 || size <= int(limit) {
		return nil
	}
	overhead := size - d.payloadBytes
	g := d.cfg.Group
	return &refusal.Error{
		What: fmt.Sprintf("the broker's Maximum Packet Size is %d bytes (its CONNACK) and a PUBLISH of its %d-byte payload is %d bytes",
			limit, d.payloadBytes, size),
		Detail: "client " + c.ID,
		Advice: fmt.Sprintf("lower %s to at most %d bytes, or raise the broker's limit (Mosquitto: max_packet_size in spec.broker.config)",
			field(g, "workload.payloadBytes", "publish.payloadBytes"), int(limit)-overhead),
	}
}
