// Package localaddr decides whether a local run may use a host name: `msgbench run` talks only
// to this machine and the addresses a user gives, and resolves names only from this machine's
// own table — localhost, IP addresses and /etc/hosts — never through DNS. A Kubernetes Service
// name (minio.minio.svc, mosquitto.mqtt.svc.cluster.local) exists only inside a cluster.
package localaddr

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
)

// HostsFile is the table of local names (a variable for tests).
var HostsFile = "/etc/hosts"

// Check returns nil when host is localhost, an IP address or a name in HostsFile, and otherwise
// an error saying why it cannot be used locally (field names the spec field for the message).
func Check(field, host string) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || net.ParseIP(strings.Trim(h, "[]")) != nil || inHosts(h) {
		return nil
	}
	if ClusterOnly(h) {
		return fmt.Errorf("%s: %s is a Kubernetes Service name, which exists only inside a cluster: run the manifest there "+
			"(kubectl apply), or give an address this machine reaches (localhost or an IP address)", field, host)
	}
	return fmt.Errorf("%s: %s is not a name of this machine (a local run resolves only localhost, IP addresses and %s, never DNS): "+
		"give an IP address, or add the name to %s", field, host, HostsFile, HostsFile)
}

// ClusterOnly reports whether host has the form of a Kubernetes Service name: it ends in .svc,
// .svc.cluster.local or .cluster.local.
func ClusterOnly(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return strings.HasSuffix(h, ".svc") || strings.HasSuffix(h, ".cluster.local")
}

func inHosts(name string) bool {
	f, err := os.Open(HostsFile)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		for _, n := range fields[1:] {
			if strings.EqualFold(n, name) {
				return true
			}
		}
	}
	return false
}
