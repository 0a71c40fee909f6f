package kafka_test

import (
	"crypto/tls"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/internal/certs"
)

func TestRender(t *testing.T) {
	base := kafka.Config{Host: "127.0.0.1", Port: 1, ControllerPort: 2, DataDir: "/d"}
	cases := []struct {
		name    string
		tweak   func(*kafka.Config)
		want    []string // lines the properties must hold
		wantErr string
	}{
		{"plain", nil, []string{"listeners=PLAINTEXT://127.0.0.1:1,CONTROLLER://127.0.0.1:2", "advertised.listeners=PLAINTEXT://127.0.0.1:1",
			"controller.quorum.voters=1@127.0.0.1:2", "auto.create.topics.enable=false", "offsets.topic.replication.factor=1"}, ""},
		{"tls 1.3", func(c *kafka.Config) { c.TLSPort, c.KeystoreFile, c.TLSVersion = 3, "/k.pem", "1.3" },
			[]string{"advertised.listeners=PLAINTEXT://127.0.0.1:1,SSL://127.0.0.1:3", "ssl.keystore.type=PEM", "ssl.keystore.location=/k.pem", "ssl.enabled.protocols=TLSv1.3"}, ""},
		{"tls 1.2", func(c *kafka.Config) { c.TLSPort, c.TLSVersion = 3, "1.2" }, []string{"ssl.enabled.protocols=TLSv1.2"}, ""},
		{"tls either", func(c *kafka.Config) { c.TLSPort = 3 }, []string{"ssl.enabled.protocols=TLSv1.2,TLSv1.3"}, ""},
		{"bad tls version", func(c *kafka.Config) { c.TLSPort, c.TLSVersion = 3, "1.1" }, nil, "spec.tls.version"},
		{"extra", func(c *kafka.Config) { c.Extra = map[string]string{"num.io.threads": "4"} }, []string{"num.io.threads=4"}, ""},
		{"managed listener", func(c *kafka.Config) { c.Extra = map[string]string{"listener.name.ssl.foo": "x"} }, nil, `"listener.name.ssl.foo" is managed`},
		{"managed ssl", func(c *kafka.Config) { c.Extra = map[string]string{"ssl.keystore.type": "JKS"} }, nil, "spec.tls"},
		{"not a key", func(c *kafka.Config) { c.Extra = map[string]string{"a=b": "x"} }, nil, "not a Kafka broker setting"},
		{"multi-line value", func(c *kafka.Config) { c.Extra = map[string]string{"a.b": "x\nlisteners=y"} }, nil, "spans lines"},
		{"sasl plaintext, PLAIN users in JAAS", func(c *kafka.Config) {
			c.SASLPort, c.SASL = 4, &kafka.SASL{Mechanisms: []string{"PLAIN"}, Users: map[string]string{"dev-1": `p"w\1`, "dev-0": "pw-0é"}}
		}, []string{"advertised.listeners=PLAINTEXT://127.0.0.1:1,SASL_PLAINTEXT://127.0.0.1:4",
			"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
			"sasl.enabled.mechanisms=PLAIN",
			// a Properties value (\\ for \, \u00E9 for é) holding a JAAS quoted string (\" and \\)
			`listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_dev-0="pw-0\u00E9" user_dev-1="p\\"w\\\\1";`}, ""},
		{"sasl_ssl, SCRAM", func(c *kafka.Config) {
			c.TLSPort, c.KeystoreFile, c.SASLPort = 3, "/k.pem", 4
			c.SASL = &kafka.SASL{Mechanisms: []string{"SCRAM-SHA-256", "SCRAM-SHA-512"}, Users: map[string]string{"a@b": "x"}}
		}, []string{"advertised.listeners=PLAINTEXT://127.0.0.1:1,SSL://127.0.0.1:3,SASL_SSL://127.0.0.1:4", "sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
			"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
			"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"}, ""},
		{"PLAIN user JAAS cannot name", func(c *kafka.Config) {
			c.SASLPort, c.SASL = 4, &kafka.SASL{Mechanisms: []string{"PLAIN"}, Users: map[string]string{"a@b": "x"}}
		}, nil, `user "a@b": the Kafka msgbench runs lists SASL/PLAIN users in its JAAS configuration`},
		{"unknown mechanism", func(c *kafka.Config) {
			c.SASLPort, c.SASL = 4, &kafka.SASL{Mechanisms: []string{"GSSAPI"}, Users: map[string]string{"a": "x"}}
		}, nil, `"GSSAPI" is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`},
		{"managed sasl", func(c *kafka.Config) { c.Extra = map[string]string{"sasl.enabled.mechanisms": "PLAIN"} }, nil, "client authentication comes from spec.identity"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := base
			if c.tweak != nil {
				c.tweak(&cfg)
			}
			props, err := cfg.Render()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "spec.") {
					t.Fatalf("error %v, want one naming the field and %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(props, "\n")
			for _, w := range c.want {
				found := false
				for _, l := range lines {
					found = found || l == w
				}
				if !found {
					t.Errorf("server.properties lacks %q:\n%s", w, props)
				}
			}
		})
	}
}

// TestPEMKeystore: the keystore is the PKCS #8 key Kafka reads and the certificate, and Go reads
// the pair back as the same server identity.
func TestPEMKeystore(t *testing.T) {
	b, err := certs.New("k", []string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := kafka.PEMKeystore(b)
	if err != nil {
		t.Fatal(err)
	}
	block, rest := pem.Decode(ks)
	if block == nil || block.Type != "PRIVATE KEY" {
		t.Fatalf("first block %v, want an unencrypted PKCS #8 PRIVATE KEY", block)
	}
	if cert, _ := pem.Decode(rest); cert == nil || cert.Type != "CERTIFICATE" {
		t.Fatal("no certificate after the key")
	}
	if _, err := tls.X509KeyPair(ks, ks); err != nil {
		t.Errorf("key and certificate do not match: %v", err)
	}
}
