package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Device key types (spec.tls.clientCertificates.keyType).
const (
	KeyECDSAP256 = "ecdsa-p256"
	KeyRSA2048   = "rsa-2048"
)

// NewCA makes a CA (ECDSA P-256) that signs the devices' client certificates of a run, PEM: its
// certificate and its PKCS #8 private key.
func NewCA(commonName string, lifetime time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := caTemplate(commonName, lifetime)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// Issuer signs one client certificate per device with a CA: subject common name from a pattern
// ({clientId}: the device's client id), key usage digital signature, extended key usage client
// authentication, valid as long as the CA. Only the device's own certificate goes on the wire
// (the server has the CA), as a device provisioned by a fleet's CA sends it.
type Issuer struct {
	ca         *x509.Certificate
	key        crypto.Signer
	keyType    string
	commonName string
}

// NewIssuer reads the CA's PEM certificate and unencrypted private key (PKCS #8, PKCS #1 or
// SEC 1); keyType is the devices' key (ecdsa-p256, default, or rsa-2048), commonName the pattern
// of their common names (default "{clientId}").
func NewIssuer(caPEM, keyPEM []byte, keyType, commonName string) (*Issuer, error) {
	block, _ := pem.Decode(caPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("CA certificate: no PEM CERTIFICATE block")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	if !ca.IsCA {
		return nil, fmt.Errorf("CA certificate %q is not a CA (basic constraints CA:FALSE); it cannot sign the devices' certificates", ca.Subject.CommonName)
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	if !publicKeysEqual(key.Public(), ca.PublicKey) {
		return nil, fmt.Errorf("CA key: it is not the key of CA certificate %q", ca.Subject.CommonName)
	}
	switch keyType {
	case "":
		keyType = KeyECDSAP256
	case KeyECDSAP256, KeyRSA2048:
	default:
		return nil, fmt.Errorf("key type %q: want %s or %s", keyType, KeyECDSAP256, KeyRSA2048)
	}
	if commonName == "" {
		commonName = "{clientId}"
	}
	return &Issuer{ca: ca, key: key, keyType: keyType, commonName: commonName}, nil
}

func parseKey(keyPEM []byte) (crypto.Signer, error) {
	for rest := keyPEM; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return nil, errors.New("no PEM private key block (PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY; encrypted keys are not read)")
		}
		var k any
		var err error
		switch block.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("a %T cannot sign", k)
		}
		return s, nil
	}
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	e, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && e.Equal(b)
}

// CommonName is the subject common name of client id's certificate.
func (i *Issuer) CommonName(clientID string) string {
	return strings.ReplaceAll(i.commonName, "{clientId}", clientID)
}

// CACert is the issuing CA's certificate, DER.
func (i *Issuer) CACert() []byte { return i.ca.Raw }

// Certificate makes client id's key and certificate.
func (i *Issuer) Certificate(clientID string) (*tls.Certificate, error) {
	var key crypto.Signer
	var err error
	usage := x509.KeyUsageDigitalSignature
	if i.keyType == KeyRSA2048 {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
		usage |= x509.KeyUsageKeyEncipherment
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: i.CommonName(clientID)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     i.ca.NotAfter,
		KeyUsage:     usage,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, i.ca, key.Public(), i.key)
	if err != nil {
		return nil, fmt.Errorf("client certificate of %s: %w", clientID, err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
