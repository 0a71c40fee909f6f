package refusal

import (
	"errors"
	"net"
	"strings"
)

// Alerts a server sends about the client's certificate (RFC 8446 §6.2; Go words them "tls: …").
var clientCertAlerts = map[string]string{
	"tls: certificate required":          "certificate required: the server requires a client certificate (mutual TLS) and the client sent none",
	"tls: bad certificate":               "bad certificate: the server could not verify the client's certificate (TLS 1.2 servers also send it for a missing one)",
	"tls: unknown certificate authority": "unknown certificate authority: the client's certificate is not signed by a CA the server trusts",
	"tls: certificate expired":           "certificate expired: the client's certificate is not valid now",
	"tls: unsupported certificate":       "unsupported certificate: the server does not accept the client certificate's kind (key type or key usage)",
	"tls: access denied":                 "access denied: the server verified the client's certificate and refused that identity",
}

// ClientCertificate explains a TLS alert from address about the client's certificate, nil when
// err carries none. presented is whether the clients present certificates
// (spec.tls.clientCertificates): the advice differs. field is that spec field's name.
func ClientCertificate(address string, err error, presented bool, field string) *Error {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return nil
	}
	what, ok := clientCertAlerts[op.Err.Error()]
	if !ok {
		return nil
	}
	e := &Error{What: "the TLS server at " + address + " sent the alert " + what, Err: err}
	switch {
	case !presented:
		e.Advice = "set " + field + " so that each device presents its own certificate, signed by the CA the server trusts (its ca: certFile and keyFile, or secretRef; docs/tls.md)"
	case strings.Contains(what, "unknown certificate authority") || strings.Contains(what, "bad certificate"):
		e.Advice = "sign the devices' certificates with the CA the server trusts: " + field + ".ca (docs/tls.md)"
	default:
		e.Advice = "check " + field + " against what the server accepts (docs/tls.md)"
	}
	return e
}
