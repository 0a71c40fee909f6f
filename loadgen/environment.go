package loadgen

import (
	"crypto/tls"
	"os"
	"runtime"

	"github.com/msgbench/msgbench/internal/hostinfo"
	"github.com/msgbench/msgbench/internal/version"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/results"
)

// environment completes what the caller's Options.Environment left empty with what this worker
// knows: its machine (host, CPU model and cores, kernel), its build (msgbench version and
// commit, Go version), the protocol as spoken, and the TLS version, key-exchange group and cipher
// suite the clients' handshakes negotiated.
func (r *run) environment(env *results.Environment) {
	if env.Host == "" {
		env.Host, _ = os.Hostname()
	}
	if env.GoVersion == "" {
		env.GoVersion = runtime.Version()
	}
	if env.CPUs == 0 {
		env.CPUs = runtime.NumCPU()
	}
	host := hostinfo.Get()
	if env.CPUModel == "" {
		env.CPUModel = host.CPUModel
	}
	if env.Kernel == "" {
		env.Kernel = host.Kernel
	}
	if env.MsgbenchVersion == "" {
		env.MsgbenchVersion = version.Version
	}
	if env.MsgbenchCommit == "" {
		env.MsgbenchCommit = version.CommitOrUnknown()
	}
	if env.Protocol == "" {
		env.Protocol = r.group().ProtocolLabel()
	}
	for _, gr := range r.groups { // spec.mqttsn.discovery: what the clients searched and found
		if dr, ok := gr.drv.(drivers.DiscoveryReporter); ok {
			if d := dr.Discovery(); d != nil {
				if env.Discovery == nil {
					env.Discovery = &results.Discovery{}
				}
				env.Discovery.Merge(d)
			}
		}
	}
	if tr, ok := r.drv.(drivers.TLSReporter); ok {
		if cs := tr.TLSState(); cs != nil {
			env.TLSVersion, env.TLSGroup = tlsNames(cs)
			env.TLSCipherSuite = tls.CipherSuiteName(cs.CipherSuite)
		}
	}
}

// tlsNames names a handshake's version ("TLS 1.3") and key-exchange group ("X25519MLKEM768";
// empty when the handshake used none, as TLS 1.2 with RSA key exchange).
func tlsNames(cs *tls.ConnectionState) (version, group string) {
	version = tls.VersionName(cs.Version)
	if cs.CurveID != 0 {
		group = cs.CurveID.String()
	}
	return version, group
}

// tlsCounts sets the wire figures' handshake counts (nil without TLS or before any handshake).
func (r *run) tlsCounts(w *results.Wire) {
	tr, ok := r.drv.(drivers.TLSReporter)
	if !ok {
		return
	}
	if st := tr.TLSStats(); st.Handshakes > 0 {
		w.TLSHandshakes, w.TLSResumed, w.ZeroRTT = results.Int64(st.Handshakes), results.Int64(st.Resumed), results.Int64(st.ZeroRTT)
	}
}
