package artemis

import (
	"encoding/xml"
	"strings"
	"testing"
)

func testConfig() Config {
	return Config{Layout: Layout{Home: "/opt/a", Instance: "/var/i", Etc: "/etc/a"}, Port: 1883}
}

// acceptors parses broker.xml and returns its acceptors' URLs by name, and the catch-all
// address setting's and <core>'s elements: what Artemis will read, not how the text looks.
func parse(t *testing.T, brokerXML string) (acceptors, setting, core map[string]string) {
	t.Helper()
	var doc struct {
		Core struct {
			Elems []struct {
				XMLName xml.Name
				Value   string `xml:",chardata"`
			} `xml:",any"`
			Acceptors []struct {
				Name string `xml:"name,attr"`
				URL  string `xml:",chardata"`
			} `xml:"acceptors>acceptor"`
			Settings []struct {
				Match string `xml:"match,attr"`
				Elems []struct {
					XMLName xml.Name
					Value   string `xml:",chardata"`
				} `xml:",any"`
			} `xml:"address-settings>address-setting"`
		} `xml:"core"`
	}
	if err := xml.Unmarshal([]byte(brokerXML), &doc); err != nil {
		t.Fatalf("broker.xml is not XML: %v\n%s", err, brokerXML)
	}
	acceptors, setting, core = map[string]string{}, map[string]string{}, map[string]string{}
	for _, a := range doc.Core.Acceptors {
		acceptors[a.Name] = a.URL
	}
	for _, e := range doc.Core.Elems {
		if _, dup := core[e.XMLName.Local]; dup {
			t.Fatalf("<core> has <%s> twice", e.XMLName.Local)
		}
		core[e.XMLName.Local] = e.Value
	}
	if len(doc.Core.Settings) != 1 || doc.Core.Settings[0].Match != "#" {
		t.Fatalf("want one catch-all address-setting, got %+v", doc.Core.Settings)
	}
	for _, e := range doc.Core.Settings[0].Elems {
		setting[e.XMLName.Local] = e.Value
	}
	return acceptors, setting, core
}

func params(t *testing.T, url string) map[string]string {
	t.Helper()
	_, q, ok := strings.Cut(url, "?")
	if !ok {
		t.Fatalf("acceptor %q has no parameters", url)
	}
	out := map[string]string{}
	for _, kv := range strings.Split(q, ";") {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

func TestRenderPlain(t *testing.T) {
	c := testConfig()
	c.BindAddress = "127.0.0.1"
	files, err := c.Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{BrokerXML, BootstrapXML, "management.xml", "log4j2.properties"} {
		if files[f] == "" {
			t.Errorf("%s missing", f)
		}
	}
	if _, ok := files[KeystoreCfg]; ok {
		t.Error("a keystore without TLS")
	}
	if !strings.Contains(files[BootstrapXML], `configuration="file:/etc/a/broker.xml"`) {
		t.Errorf("bootstrap.xml does not point at etc/broker.xml:\n%s", files[BootstrapXML])
	}
	acc, setting, core := parse(t, files[BrokerXML])
	if len(acc) != 1 || !strings.HasPrefix(acc["mqtt"], "tcp://127.0.0.1:1883?") {
		t.Fatalf("acceptors %v: want only mqtt on 127.0.0.1:1883", acc)
	}
	if p := params(t, acc["mqtt"]); p["protocols"] != "MQTT" || p["sslEnabled"] != "" {
		t.Errorf("plain acceptor parameters %v", p)
	}
	for k, want := range map[string]string{"security-enabled": "false", "journal-type": "NIO", "max-disk-usage": "-1",
		"journal-directory": "/var/i/data/journal", "paging-directory": "/var/i/data/paging"} {
		if core[k] != want {
			t.Errorf("<%s> = %q, want %q", k, core[k], want)
		}
	}
	if setting["address-full-policy"] != "PAGE" {
		t.Errorf("address-full-policy %q, want PAGE", setting["address-full-policy"])
	}
}

func TestRenderTLS(t *testing.T) {
	for _, tc := range []struct{ version, protocols string }{{"1.2", "TLSv1.2"}, {"1.3", "TLSv1.3"}, {"", "TLSv1.2,TLSv1.3"}} {
		c := testConfig()
		c.TLSPort, c.CertFile, c.KeyFile, c.TLSVersion = 8883, "/certs/tls.crt", "/certs/tls.key", tc.version
		files, err := c.Render()
		if err != nil {
			t.Fatal(err)
		}
		acc, _, _ := parse(t, files[BrokerXML])
		if !strings.HasPrefix(acc["mqtts"], "tcp://0.0.0.0:8883?") {
			t.Fatalf("mqtts acceptor %q", acc["mqtts"])
		}
		p := params(t, acc["mqtts"])
		if p["sslEnabled"] != "true" || p["protocols"] != "MQTT" || p["enabledProtocols"] != tc.protocols ||
			p["keyStoreType"] != "PEMCFG" || p["keyStorePath"] != "/etc/a/keystore.pemcfg" {
			t.Errorf("TLS %q: mqtts parameters %v", tc.version, p)
		}
		if want := "source.cert=/certs/tls.crt\nsource.key=/certs/tls.key\n"; !strings.Contains(files[KeystoreCfg], want) {
			t.Errorf("keystore.pemcfg %q does not name the PEM files", files[KeystoreCfg])
		}
	}
	c := testConfig()
	c.TLSPort, c.CertFile, c.KeyFile, c.TLSVersion = 8883, "/c", "/k", "1.1"
	if _, err := c.Render(); err == nil || !strings.Contains(err.Error(), "spec.tls.version") {
		t.Errorf("TLS 1.1: %v, want an error naming spec.tls.version", err)
	}
}

func TestRenderExtra(t *testing.T) {
	c := testConfig()
	c.TLSPort, c.CertFile, c.KeyFile = 8883, "/c", "/k"
	c.Extra = map[string]string{
		"acceptor.maximumPacketSize":          "100000",
		"address-setting.address-full-policy": "BLOCK",
		"address-setting.max-size-bytes":      "10MB",
		"journal-type":                        "ASYNCIO",
		"global-max-size":                     "64MB",
		"name":                                "a&b",
	}
	files, err := c.Render()
	if err != nil {
		t.Fatal(err)
	}
	acc, setting, core := parse(t, files[BrokerXML])
	for _, a := range []string{"mqtt", "mqtts"} {
		if p := params(t, acc[a]); p["maximumPacketSize"] != "100000" {
			t.Errorf("%s: acceptor.maximumPacketSize missing: %v", a, p)
		}
	}
	if setting["address-full-policy"] != "BLOCK" || setting["max-size-bytes"] != "10MB" {
		t.Errorf("address setting %v", setting)
	}
	if core["journal-type"] != "ASYNCIO" || core["global-max-size"] != "64MB" || core["name"] != "a&b" {
		t.Errorf("core %v", core)
	}
}

func TestRenderRefuses(t *testing.T) {
	for key, want := range map[string]string{
		"acceptors":                 "managed by msgbench",
		"acceptor.sslEnabled":       "managed by msgbench",
		"acceptor.keyStorePath":     "managed by msgbench",
		"acceptor.enabledProtocols": "managed by msgbench",
		"acceptor.protocols":        "managed by msgbench",
		"journal-directory":         "managed by msgbench",
		"security-enabled":          "managed by msgbench",
		"address-settings":          "managed by msgbench",
		"ha-policy":                 "managed by msgbench",
		"acceptor.bad-name":         "not an acceptor URL parameter",
		"9lives":                    "not a broker.xml <core> element",
		"address-setting.":          "not an address-setting element",
	} {
		c := testConfig()
		c.Extra = map[string]string{key: "x"}
		_, err := c.Render()
		if err == nil || !strings.Contains(err.Error(), "spec.broker.config") || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), want) {
			t.Errorf("key %q: %v, want an error naming spec.broker.config and the key: %s", key, err, want)
		}
	}
	for key, value := range map[string]string{"acceptor.tcpNoDelay": "true;sslEnabled=false", "global-max-size": "1</global-max-size><x>", "name": "a\nb"} {
		c := testConfig()
		c.Extra = map[string]string{key: value}
		if _, err := c.Render(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%q: %v, want refused", key, value, err)
		}
	}
}

func TestArgs(t *testing.T) {
	l := Layout{Home: "/opt/a", Instance: "/var/i", Etc: "/etc/a"}
	args := strings.Join(l.Args(0), " ")
	for _, want := range []string{"-Xmx512m", "-Dartemis.home=/opt/a", "-Dartemis.instance=/var/i", "-Dartemis.instance.etc=/etc/a",
		"-Ddata.dir=/var/i/data", "-Djava.io.tmpdir=/var/i/tmp", "-cp /opt/a/lib/artemis-boot.jar org.apache.activemq.artemis.boot.Artemis run"} {
		if !strings.Contains(args, want) {
			t.Errorf("java args %q lack %q", args, want)
		}
	}
	if !strings.HasSuffix(args, " run") {
		t.Errorf("java args %q do not end in run", args)
	}
	if a := strings.Join(l.Args(2048), " "); !strings.Contains(a, "-Xmx2048m") || !strings.Contains(a, "-Xms256m") {
		t.Errorf("2 GiB heap: %q", a)
	}
}
