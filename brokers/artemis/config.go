// Package artemis runs Apache ActiveMQ Artemis as a benchmark's MQTT broker: the instance files
// msgbench writes itself (broker.xml, bootstrap.xml, …; shared by the operator's ConfigMap and
// local runs, no `artemis create`), the java command line that runs them (no shell scripts), and a
// local broker process from the distribution hack/artemis.sh fetches from Maven Central.
package artemis

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Version is the Artemis release msgbench runs: locally (hack/artemis.sh) and on Kubernetes (the
// official image apache/activemq-artemis pinned in controllers/resources).
const Version = "2.40.0"

// Layout is where an Artemis instance lives: the distribution (Home, read-only), the instance
// folder Artemis writes (its lock/, data/ and tmp/) and the folder of the files Render writes
// (Etc; Artemis only reads it, so it may be a read-only ConfigMap).
type Layout struct {
	Home     string
	Instance string
	Etc      string
}

// DataDir holds the journal, bindings, paging and large messages.
func (l Layout) DataDir() string { return path.Join(l.Instance, "data") }

// TmpDir is the JVM's java.io.tmpdir (Netty unpacks its native epoll library there): inside the
// instance, so a read-only root file system is enough.
func (l Layout) TmpDir() string { return path.Join(l.Instance, "tmp") }

// Args are java's arguments to run the broker of l with a heapMB heap: what Artemis's own
// bin/artemis script and the instance's artemis.profile pass, without the web console, JMX and
// JAAS login files (security is off), with the broker's own etc folder.
func (l Layout) Args(heapMB int) []string {
	if heapMB <= 0 {
		heapMB = 512
	}
	return []string{
		fmt.Sprintf("-Xms%dm", min(heapMB, 256)), fmt.Sprintf("-Xmx%dm", heapMB),
		"-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError",
		// no hsperfdata file in /tmp, which is read-only in the broker's pod
		"-XX:-UsePerfData",
		"-Djava.awt.headless=true", "-Dlog4j2.disableJmx=true",
		// as artemis.profile: Netty reads direct-memory figures through jdk.internal.misc
		"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
		"-Dlog4j2.configurationFile=" + path.Join(l.Etc, "log4j2.properties"),
		"-Dartemis.home=" + l.Home,
		"-Dartemis.instance=" + l.Instance,
		"-Dartemis.instance.etc=" + l.Etc,
		"-Ddata.dir=" + l.DataDir(),
		"-Djava.io.tmpdir=" + l.TmpDir(),
		"-cp", path.Join(l.Home, "lib", "artemis-boot.jar"),
		"org.apache.activemq.artemis.boot.Artemis", "run",
	}
}

// Config is what msgbench needs from an Artemis broker.
type Config struct {
	Layout

	// Port of the plain MQTT acceptor (always served). BindAddress is the address both
	// acceptors bind (empty: all, 0.0.0.0).
	Port        int
	BindAddress string

	// TLSPort of the MQTTS acceptor (0: none), with the PEM certificate chain and key it
	// serves and the TLS version ("1.2", "1.3"; empty accepts both).
	TLSPort    int
	CertFile   string
	KeyFile    string
	TLSVersion string

	// Extra holds spec.broker.config:
	//   acceptor.<param>         a URL parameter of both MQTT acceptors (acceptor.maximumPacketSize=1048576)
	//   address-setting.<elem>   an element of the catch-all <address-setting match="#">
	//                            (address-setting.address-full-policy=BLOCK)
	//   <elem>                   an element of broker.xml's <core> (journal-type=ASYNCIO,
	//                            persistence-enabled=false, global-max-size=100MB)
	// A key replaces msgbench's own value of the same setting.
	Extra map[string]string
}

// ManagedKeys are spec.broker.config keys msgbench sets itself, with why; a key ending in "*"
// stands for every key with that prefix. api/v1alpha1 refuses them at admission with the same
// list (brokers/caps's TestAdmissionRulesListTheGoTables holds the two equal).
var ManagedKeys = map[string]string{
	"acceptors":                   "msgbench opens the acceptors the benchmark needs",
	"connectors":                  "msgbench opens the acceptors the benchmark needs",
	"acceptor.protocols":          "the MQTT acceptors serve MQTT only",
	"acceptor.host":               "msgbench opens the acceptors the benchmark needs",
	"acceptor.port":               "msgbench opens the acceptors the benchmark needs",
	"acceptor.ssl*":               "TLS settings come from spec.tls",
	"acceptor.keyStore*":          "TLS settings come from spec.tls",
	"acceptor.trustStore*":        "TLS settings come from spec.tls",
	"acceptor.enabledProtocols":   "set spec.tls.version",
	"acceptor.needClientAuth":     "msgbench runs without client authentication",
	"acceptor.wantClientAuth":     "msgbench runs without client authentication",
	"security-enabled":            "msgbench runs without client authentication",
	"security-settings":           "msgbench runs without client authentication",
	"address-settings":            "set address-setting.<element> for the catch-all address setting",
	"paging-directory":            "msgbench chooses the storage",
	"bindings-directory":          "msgbench chooses the storage",
	"journal-directory":           "msgbench chooses the storage",
	"large-messages-directory":    "msgbench chooses the storage",
	"node-manager-lock-directory": "msgbench chooses the storage",
	"journal-retention-directory": "msgbench chooses the storage",
	"ha-policy":                   "msgbench runs one broker",
	"cluster-connections":         "msgbench runs one broker",
	"broadcast-groups":            "msgbench runs one broker",
	"discovery-groups":            "msgbench runs one broker",
	"cluster-user":                "msgbench runs one broker",
	"cluster-password":            "msgbench runs one broker",
}

// managed returns why k is managed, or "".
func managed(k string) string {
	for m, why := range ManagedKeys {
		if k == m || (strings.HasSuffix(m, "*") && strings.HasPrefix(k, strings.TrimSuffix(m, "*"))) {
			return why
		}
	}
	return ""
}

var (
	xmlName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
	paramName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.]*$`)
)

// CheckConfig refuses spec.broker.config keys msgbench manages or Artemis cannot take, naming
// the field and the key.
func CheckConfig(extra map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		v := extra[k]
		if why := managed(k); why != "" {
			return fmt.Errorf("spec.broker.config: key %q is managed by msgbench (%s)", k, why)
		}
		switch {
		case strings.HasPrefix(k, "acceptor."):
			if !paramName.MatchString(strings.TrimPrefix(k, "acceptor.")) {
				return fmt.Errorf("spec.broker.config: %q is not an acceptor URL parameter", k)
			}
			if v == "" || strings.ContainsAny(v, ";&#?= \t\r\n") {
				return fmt.Errorf("spec.broker.config: value of %q must be non-empty, without spaces, ';', '&', '#', '?' or '='", k)
			}
		case strings.HasPrefix(k, "address-setting."):
			if !xmlName.MatchString(strings.TrimPrefix(k, "address-setting.")) {
				return fmt.Errorf("spec.broker.config: %q is not an address-setting element", k)
			}
		default:
			if !xmlName.MatchString(k) {
				return fmt.Errorf("spec.broker.config: %q is not a broker.xml <core> element (names start with a letter)", k)
			}
		}
		if strings.ContainsAny(v, "<>\r\n") {
			return fmt.Errorf("spec.broker.config: value of %q holds '<', '>' or a line break; it must be a single text value", k)
		}
	}
	return nil
}

// TLSProtocols maps spec.tls.version to the acceptor's enabledProtocols.
func TLSProtocols(version string) (string, error) {
	switch version {
	case "1.2":
		return "TLSv1.2", nil
	case "1.3":
		return "TLSv1.3", nil
	case "":
		return "TLSv1.2,TLSv1.3", nil
	}
	return "", fmt.Errorf("spec.tls.version: %q is not 1.2 or 1.3", version)
}

// File names Render writes into Layout.Etc.
const (
	BrokerXML    = "broker.xml"
	BootstrapXML = "bootstrap.xml"
	KeystoreCfg  = "keystore.pemcfg"
)

// Render writes the instance's etc files (name → content). Comments in broker.xml say why each
// setting differs from Artemis's default.
func (c Config) Render() (map[string]string, error) {
	if err := CheckConfig(c.Extra); err != nil {
		return nil, err
	}
	if c.Port <= 0 {
		return nil, fmt.Errorf("artemis: the plain MQTT port is required")
	}
	if c.Etc == "" || c.Instance == "" {
		return nil, fmt.Errorf("artemis: the instance and etc folders are required")
	}
	bind := c.BindAddress
	if bind == "" {
		bind = "0.0.0.0"
	}
	params := map[string]string{"protocols": "MQTT"}
	core := map[string]string{}
	setting := map[string]string{}
	for k, v := range c.Extra {
		switch {
		case strings.HasPrefix(k, "acceptor."):
			params[strings.TrimPrefix(k, "acceptor.")] = v
		case strings.HasPrefix(k, "address-setting."):
			setting[strings.TrimPrefix(k, "address-setting.")] = v
		default:
			core[k] = v
		}
	}
	files := map[string]string{
		BootstrapXML:        bootstrap(path.Join(c.Etc, BrokerXML)),
		"management.xml":    management,
		"log4j2.properties": log4j2,
	}

	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!-- broker.xml written by msgbench for one benchmark run -->
<configuration xmlns="urn:activemq" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
   <core xmlns="urn:activemq:core">
`)
	elem := func(indent, name, def, comment string, extra map[string]string) {
		v, ok := extra[name]
		if ok {
			delete(extra, name)
			comment = "spec.broker.config"
		} else {
			v = def
		}
		if comment != "" {
			fmt.Fprintf(&b, "%s<!-- %s -->\n", indent, comment)
		}
		fmt.Fprintf(&b, "%s<%s>%s</%s>\n", indent, name, xmlEscape(v), name)
	}
	const in = "      "
	elem(in, "name", "msgbench", "", core)
	b.WriteString(in + "<!-- clients connect anonymously: a benchmark measures messaging, not authentication -->\n")
	fmt.Fprintf(&b, "%s<security-enabled>false</security-enabled>\n", in)
	elem(in, "journal-type", "NIO", "Artemis's default is ASYNCIO (libaio) where the library exists: NIO everywhere, so local runs, the\n"+
		in+"     official image (libaio) and a Debian JRE image (none) write the same journal", core)
	elem(in, "journal-pool-files", "10", "the value `artemis create` writes (Artemis warns when it is unset)", core)
	elem(in, "max-disk-usage", "-1", "a nearly full disk must not block publishers in the middle of a run (Artemis's default: at 90%)", core)
	for _, d := range []string{"paging", "bindings", "journal", "large-messages"} {
		fmt.Fprintf(&b, "%s<%s-directory>%s</%s-directory>\n", in, d, xmlEscape(path.Join(c.DataDir(), d)), d)
	}
	for _, k := range slices.Sorted(maps.Keys(core)) {
		elem(in, k, "", "", core)
	}

	b.WriteString(in + "<acceptors>\n")
	fmt.Fprintf(&b, "%s   <acceptor name=\"mqtt\">%s</acceptor>\n", in, xmlEscape(acceptorURL(bind, c.Port, params)))
	if c.TLSPort > 0 {
		protocols, err := TLSProtocols(c.TLSVersion)
		if err != nil {
			return nil, err
		}
		if c.CertFile == "" || c.KeyFile == "" {
			return nil, fmt.Errorf("artemis: the MQTTS acceptor needs a certificate and a key file")
		}
		tls := maps.Clone(params)
		maps.Copy(tls, map[string]string{
			"sslEnabled": "true",
			// PEMCFG (the pem-keystore provider Artemis ships): the PEM files as they are,
			// listed in a small file, no PKCS#12 conversion.
			"keyStoreType": "PEMCFG", "keyStorePath": path.Join(c.Etc, KeystoreCfg),
			"enabledProtocols": protocols,
		})
		fmt.Fprintf(&b, "%s   <acceptor name=\"mqtts\">%s</acceptor>\n", in, xmlEscape(acceptorURL(bind, c.TLSPort, tls)))
		files[KeystoreCfg] = fmt.Sprintf("alias=msgbench\nsource.cert=%s\nsource.key=%s\n", c.CertFile, c.KeyFile)
	}
	b.WriteString(in + "</acceptors>\n")

	b.WriteString(in + "<address-settings>\n")
	b.WriteString(in + "   <address-setting match=\"#\">\n")
	const in2 = in + "      "
	elem(in2, "address-full-policy", "PAGE", "past global-max-size (half the heap) messages go to disk; BLOCK would stall publishers", setting)
	for _, k := range slices.Sorted(maps.Keys(setting)) {
		elem(in2, k, "", "", setting)
	}
	b.WriteString(in + "   </address-setting>\n")
	b.WriteString(in + "</address-settings>\n")
	b.WriteString("   </core>\n</configuration>\n")
	files[BrokerXML] = b.String()
	return files, nil
}

// acceptorURL is tcp://host:port?k=v;… with the parameters sorted.
func acceptorURL(host string, port int, params map[string]string) string {
	var p []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		p = append(p, k+"="+params[k])
	}
	h := host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return fmt.Sprintf("tcp://%s:%d?%s", h, port, strings.Join(p, ";"))
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

func bootstrap(brokerXML string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<!-- bootstrap.xml written by msgbench: no web console, JAAS named but unused (security is off) -->
<broker xmlns="http://activemq.apache.org/schema">
   <jaas-security domain="activemq"/>
   <server configuration="file:` + xmlEscape(brokerXML) + `"/>
</broker>
`
}

// management is required by `artemis run`; empty, it opens no JMX connector.
const management = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<management-context xmlns="http://activemq.apache.org/schema"/>
`

// log4j2 sends warnings and errors to stderr (kept in the broker's log); INFO and the audit
// loggers would cost CPU the benchmark measures.
const log4j2 = `rootLogger.level=WARN
rootLogger.appenderRef.stderr.ref=STDERR
logger.audit_base.name=org.apache.activemq.audit
logger.audit_base.level=OFF
appender.stderr.type=Console
appender.stderr.name=STDERR
appender.stderr.target=SYSTEM_ERR
appender.stderr.layout.type=PatternLayout
appender.stderr.layout.pattern=%d %-5level [%logger] %msg%n
`
