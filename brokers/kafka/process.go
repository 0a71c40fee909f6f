package kafka

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/msgbench/msgbench/brokers/brokerproc"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/spawn"
)

// LibsEnv names a folder of Kafka jars (what hack/kafka.sh prints); it overrides the search.
const LibsEnv = "MSGBENCH_KAFKA_LIBS"

// ErrNotInstalled means no Kafka jars or no java was found.
var ErrNotInstalled = errors.New("kafka is not installed: run hack/kafka.sh (fetches Apache Kafka " + Version +
	" from Maven Central into bin/kafka) or set " + LibsEnv + " to a folder of Kafka jars; java 17+ must be on PATH")

// Libs finds the Kafka jars: $MSGBENCH_KAFKA_LIBS, else bin/kafka/<Version>/libs in the
// current folder or one above it, else beside the msgbench source tree this was built from.
func Libs() (string, error) {
	if d := os.Getenv(LibsEnv); d != "" {
		if hasKafkaJar(d) {
			return d, nil
		}
		return "", fmt.Errorf("%s=%s holds no kafka_2.13 jar", LibsEnv, d)
	}
	if d, ok := brokerproc.FindInBin(filepath.Join("kafka", Version, "libs"), hasKafkaJar); ok {
		return d, nil
	}
	return "", ErrNotInstalled
}

func hasKafkaJar(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "kafka_2.13-*.jar"))
	return len(m) > 0
}

// LibsVersion reads the Kafka version from the broker jar's name.
func LibsVersion(libs string) string {
	m, _ := filepath.Glob(filepath.Join(libs, "kafka_2.13-*.jar"))
	if len(m) == 0 {
		return "unknown"
	}
	if v := regexp.MustCompile(`kafka_2\.13-(.+)\.jar$`).FindStringSubmatch(m[0]); v != nil {
		return v[1]
	}
	return "unknown"
}

// Options of a local broker.
type Options struct {
	// TLS adds an SSL listener with a certificate generated for this broker (valid for
	// 127.0.0.1, ::1 and localhost), accepting TLSVersion ("1.2" or "1.3"; empty accepts both).
	TLS        bool
	TLSVersion string
	// Host is the address every listener binds and advertises (default 127.0.0.1).
	Host string
	// Extra is spec.broker.config: more broker settings.
	Extra map[string]string
	// SASL, when set, adds a SASL listener (SASL_SSL with TLS, else SASL_PLAINTEXT) where
	// clients authenticate as its users (Process.SASLAddr); the other listeners stay open to
	// msgbench itself. AdminUser is added with a random password, to probe the listener.
	SASL *SASL
	// RequestLog routes Kafka's request log (kafka.request.logger: at DEBUG, every request with
	// its client id, principal and listener) to the file Process.RequestLog, for tests that check
	// who did what. It stays silent until LogRequests turns it on, so the broker spends nothing
	// on it meanwhile.
	RequestLog bool
	// Libs is the folder of Kafka jars (default: Libs()).
	Libs string
	// HeapMB is the JVM heap (default 512): enough for a benchmark broker, small on a shared machine.
	HeapMB int
	// Dir holds the configuration, certificates and data (default: a new temporary folder,
	// removed by Stop, or by msgbench's guardian if msgbench dies first).
	Dir string
	// Start, when set, starts the broker's command (for example inside a network namespace)
	// instead of spawn.Start. Either way the broker must get a parent-death signal.
	Start func(cmd *exec.Cmd) error
	// Listen finds free ports and Dial probes the listeners, in the namespace the broker runs
	// in (default: the net package).
	Listen func(ctx context.Context, network, address string) (net.Listener, error)
	Dial   func(ctx context.Context, network, address string) (net.Conn, error)
}

// Process is a Kafka broker this program started.
type Process struct {
	// Addr is host:port of the PLAINTEXT listener, TLSAddr of the SSL listener (when TLS).
	Addr    string
	TLSAddr string
	// SASLAddr is host:port of the SASL listener (SASL_SSL with TLS), when SASL.
	SASLAddr string
	// RequestLog is the file of Kafka's request log, when Options.RequestLog.
	RequestLog string
	// CA is the PEM CA certificate clients trust, when TLS.
	CA []byte
	// Version is the Kafka release running.
	Version string

	// the process, its folder and log, Stop, Usage (shared with brokers/mosquitto)
	*brokerproc.Process
}

// Start formats storage and starts a single-node KRaft broker (broker and controller in one
// JVM) on free loopback ports, and returns once it serves metadata on every listener.
func Start(ctx context.Context, o Options) (*Process, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, ErrNotInstalled
	}
	if o.Libs == "" {
		if o.Libs, err = Libs(); err != nil {
			return nil, err
		}
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.HeapMB == 0 {
		o.HeapMB = 512
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken between probe and bind
		p, err := start(ctx, java, o)
		if err == nil {
			return p, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	return nil, lastErr
}

func start(ctx context.Context, java string, o Options) (*Process, error) {
	// A controlled shutdown (SIGINT) takes Kafka a while: SIGKILL only after 20 s.
	bp, err := brokerproc.New("kafka", o.Dir, 20*time.Second)
	if err != nil {
		return nil, err
	}
	p := &Process{Process: bp, Version: LibsVersion(o.Libs)}
	fail := func(err error) (*Process, error) {
		_ = p.Stop()
		return nil, err
	}
	ports, err := brokerproc.FreePorts(o.Listen, o.Host, 4)
	if err != nil {
		return fail(err)
	}
	cfg := Config{Host: o.Host, Port: ports[0], ControllerPort: ports[1], DataDir: filepath.Join(p.Dir, "data"), Extra: o.Extra, TLSVersion: o.TLSVersion}
	p.Addr = net.JoinHostPort(o.Host, strconv.Itoa(cfg.Port))
	if o.TLS {
		b, err := certs.New("msgbench-kafka", []string{o.Host, "localhost", "127.0.0.1", "::1"}, 24*time.Hour)
		if err != nil {
			return fail(err)
		}
		keystore, err := PEMKeystore(b)
		if err != nil {
			return fail(err)
		}
		cfg.KeystoreFile = filepath.Join(p.Dir, "keystore.pem")
		if err := os.WriteFile(cfg.KeystoreFile, keystore, 0o600); err != nil {
			return fail(err)
		}
		cfg.TLSPort = ports[2]
		p.TLSAddr = net.JoinHostPort(o.Host, strconv.Itoa(cfg.TLSPort))
		p.CA = b.CACert
	}
	var admin string
	if o.SASL != nil {
		admin = randomPassword()
		s := &SASL{Mechanisms: o.SASL.Mechanisms, Users: maps.Clone(o.SASL.Users)}
		if s.Users == nil {
			s.Users = map[string]string{}
		}
		if _, taken := s.Users[AdminUser]; taken {
			return fail(fmt.Errorf("spec.identity: user %s is msgbench's own on the Kafka it runs; name the devices' users otherwise", AdminUser))
		}
		s.Users[AdminUser] = admin
		cfg.SASL, cfg.SASLPort = s, ports[3]
		p.SASLAddr = net.JoinHostPort(o.Host, strconv.Itoa(cfg.SASLPort))
	}
	props, err := cfg.Render()
	if err != nil {
		return fail(err)
	}
	propsPath := filepath.Join(p.Dir, "server.properties")
	logCfg := filepath.Join(p.Dir, "log4j2.properties")
	if err := os.WriteFile(propsPath, []byte(props), 0o600); err != nil {
		return fail(err)
	}
	logProps := log4j2
	if o.RequestLog {
		p.RequestLog = filepath.Join(p.Dir, "requests.log")
		logProps += requestLog(p.RequestLog)
	}
	if err := os.WriteFile(logCfg, []byte(logProps), 0o600); err != nil {
		return fail(err)
	}
	common := []string{"-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + logCfg, "-cp", filepath.Join(o.Libs, "*")}

	// Format the storage: KRaft refuses to start on an unformatted log directory.
	format := exec.CommandContext(ctx, java, append([]string{"-Xmx256m", "-XX:TieredStopAtLevel=1"}, append(common,
		"kafka.tools.StorageTool", "format", "--cluster-id", clusterID(), "--config", propsPath, "--ignore-formatted")...)...)
	if out, err := spawn.CombinedOutput(format); err != nil {
		return fail(fmt.Errorf("kafka-storage format: %w: %s", err, strings.TrimSpace(string(out))))
	}

	args := append([]string{fmt.Sprintf("-Xmx%dm", o.HeapMB), fmt.Sprintf("-Xms%dm", min(o.HeapMB, 256)),
		"-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20"}, append(common, "kafka.Kafka", propsPath)...)
	if err := p.Start(exec.Command(java, args...), o.Start); err != nil {
		return fail(err)
	}
	if err := p.waitReady(ctx, o.Dial, cfg.SASL, admin); err != nil {
		return fail(err)
	}
	return p, nil
}

// log4j2 sends warnings and errors to stderr (kept in Process.Log); Kafka's INFO chatter would
// cost CPU the benchmark measures.
const log4j2 = `rootLogger.level=WARN
rootLogger.appenderRef.stderr.ref=STDERR
appender.stderr.type=Console
appender.stderr.name=STDERR
appender.stderr.target=SYSTEM_ERR
appender.stderr.layout.type=PatternLayout
appender.stderr.layout.pattern=[%d] %p %m (%c)%n
`

// LogRequests turns the request log (Options.RequestLog) on (kafka.request.logger at DEBUG) or
// off, at run time: Kafka's broker-logger configuration, through the PLAINTEXT listener.
func (p *Process) LogRequests(ctx context.Context, on bool) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	level := map[bool]string{true: "DEBUG", false: "WARN"}[on]
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "1" // node.id
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = "kafka.request.logger", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(level)
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("set kafka.request.logger to %s: %w", level, err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return fmt.Errorf("set kafka.request.logger to %s: %w", level, err)
		}
	}
	return nil
}

// requestLog sends kafka.request.logger's DEBUG lines (one per request: its header, principal,
// listener and times) to file only.
func requestLog(file string) string {
	return `logger.request.name=kafka.request.logger
logger.request.level=WARN
logger.request.additivity=false
logger.request.appenderRef.requests.ref=REQUESTS
appender.requests.type=File
appender.requests.name=REQUESTS
appender.requests.fileName=` + file + `
appender.requests.layout.type=PatternLayout
appender.requests.layout.pattern=%m%n
`
}

// PEMKeystore is a Kafka PEM keystore (ssl.keystore.type=PEM): the server key as unencrypted
// PKCS #8 — the only unencrypted form Kafka reads — followed by the certificate chain.
func PEMKeystore(b *certs.Bundle) ([]byte, error) {
	block, _ := pem.Decode(b.ServerKey)
	if block == nil {
		return nil, errors.New("server key: no PEM block")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("server key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	_ = pem.Encode(&out, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	out.Write(b.ServerCert)
	return out.Bytes(), nil
}

// clusterID is a random KRaft cluster id (a UUID in URL-safe base64 without padding). One that
// starts with '-' is drawn again, as Kafka's own Uuid.randomUuid does: kafka-storage would read
// "--cluster-id -x…" as a missing value and another option (1 start in 64 failed so in CI).
func clusterID() string {
	var u [16]byte
	for {
		_, _ = rand.Read(u[:])
		if id := base64.RawURLEncoding.EncodeToString(u[:]); id[0] != '-' {
			return id
		}
	}
}

// waitReady polls each listener with a metadata request until the broker lists itself.
// With SASL it first creates the SCRAM users over PLAINTEXT, then probes the SASL listener as
// AdminUser with each mechanism.
func (p *Process) waitReady(ctx context.Context, dial func(ctx context.Context, network, address string) (net.Conn, error), s *SASL, admin string) error {
	deadline := time.Now().Add(90 * time.Second)
	type target struct {
		addr string
		tls  bool
		sasl string // the mechanism to probe with, "" for none
	}
	targets := []target{{addr: p.Addr}}
	if p.TLSAddr != "" {
		targets = append(targets, target{addr: p.TLSAddr, tls: true})
	}
	if s != nil {
		for _, m := range s.Mechanisms {
			targets = append(targets, target{addr: p.SASLAddr, tls: p.TLSAddr != "", sasl: m})
		}
	}
	for _, t := range targets {
		opts := []kgo.Opt{kgo.SeedBrokers(t.addr), kgo.DialTimeout(time.Second)}
		if t.sasl != "" {
			opts = append(opts, kgo.SASL(probeMechanism(t.sasl, admin)))
		}
		var tlsCfg *tls.Config
		if t.tls {
			pool, err := certs.CertPool(p.CA)
			if err != nil {
				return err
			}
			tlsCfg = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		switch {
		case dial != nil:
			opts = append(opts, kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
				c, err := dial(ctx, network, host)
				if err != nil || tlsCfg == nil {
					return c, err
				}
				cfg := tlsCfg.Clone()
				cfg.ServerName, _, _ = net.SplitHostPort(host)
				return tls.Client(c, cfg), nil
			}))
		case tlsCfg != nil:
			opts = append(opts, kgo.DialTLSConfig(tlsCfg))
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return err
		}
		err = p.WaitReady(ctx, time.Until(deadline), 200*time.Millisecond, "serve on "+t.addr, func(ctx context.Context) error {
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
			defer pcancel()
			if err := cl.Ping(pctx); err != nil {
				return err
			}
			if len(cl.DiscoveredBrokers()) == 0 {
				return errors.New("no broker in the metadata yet")
			}
			return nil
		})
		if err == nil && t.addr == p.Addr && s != nil {
			err = addSCRAMUsers(ctx, cl, s)
		}
		cl.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
