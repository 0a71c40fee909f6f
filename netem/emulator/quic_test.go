//go:build linux

package emulator

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/msgbench/msgbench/netem"
)

// TestQUIC runs quic-go across the link, over IPv4 and IPv6, with 10 ms each way and 2 % loss:
// the handshake takes one round trip (plus retransmission time when a handshake packet is lost),
// and 256 KiB echo back intact.
func TestQUIC(t *testing.T) {
	for _, ipv6 := range []bool{false, true} {
		name := "IPv4"
		if ipv6 {
			name = "IPv6"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rtt := 20 * ms
			l := startLink(t, each(netem.Impairment{Delay: rtt / 2, Loss: 20_000_000}), Options{Seed: 11})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()

			spc, err := l.Server().ListenPacket(ctx, "udp", serverAddr(t, l, ipv6, 4433))
			if err != nil {
				t.Fatal(err)
			}
			ln, err := quic.Listen(spc, serverTLS(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = ln.Close(); _ = spc.Close() }()
			go func() {
				conn, err := ln.Accept(ctx)
				if err != nil {
					return
				}
				s, err := conn.AcceptStream(ctx)
				if err != nil {
					return
				}
				_, _ = io.Copy(s, s)
				_ = s.Close()
			}()

			cpc, err := l.Device().ListenPacket(ctx, "udp", ":0")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cpc.Close() }()
			start := time.Now()
			conn, err := quic.Dial(ctx, cpc, spc.LocalAddr(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"msgbench-test"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			handshake := time.Since(start)
			defer func() { _ = conn.CloseWithError(0, "") }()
			if handshake < rtt {
				t.Errorf("QUIC handshake took %v, less than one round trip %v", handshake, rtt)
			}
			s, err := conn.OpenStreamSync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, 256<<10)
			_, _ = rand.Read(want)
			go func() { _, _ = s.Write(want); _ = s.Close() }()
			got, err := io.ReadAll(s)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("echoed %d bytes, not the %d sent", len(got), len(want))
			}
			st := l.Stats()
			t.Logf("handshake %v; link up %+v", handshake, st.Up)
			if st.Up.Lost+st.Down.Lost == 0 {
				t.Errorf("the link lost no packet: the test did not exercise QUIC's loss recovery")
			}
		})
	}
}

// serverTLS returns a TLS config with a fresh self-signed certificate.
func serverTLS(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("198.18.0.2"), net.ParseIP("2001:2::2")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		NextProtos:   []string{"msgbench-test"},
	}
}
