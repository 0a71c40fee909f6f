package kafka

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/refusal"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

// Mechanism is the franz-go SASL mechanism that authenticates as user with password
// (spec.identity.saslMechanism; PLAIN when empty).
func Mechanism(name v1alpha1.SASLMechanism, user, password string) (sasl.Mechanism, error) {
	switch name {
	case v1alpha1.SASLPlain, "":
		return plain.Auth{User: user, Pass: password}.AsMechanism(), nil
	case v1alpha1.SASLScramSHA256:
		return scram.Auth{User: user, Pass: password}.AsSha256Mechanism(), nil
	case v1alpha1.SASLScramSHA512:
		return scram.Auth{User: user, Pass: password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("spec.identity.saslMechanism: %q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", name)
}

// mechanism is the client's SASL mechanism name, "" when it shows no credentials.
func (d *driver) mechanism(c drivers.Client) v1alpha1.SASLMechanism {
	if c.Username == "" {
		return ""
	}
	if id := d.cfg.Group.Identity; id != nil && id.SASLMechanism != "" {
		return id.SASLMechanism
	}
	return v1alpha1.SASLPlain
}

// saslOpts authenticate client c as its own user: every connection it opens (bootstrap, one per
// broker) runs the SASL exchange before its first request.
func (d *driver) saslOpts(c drivers.Client) ([]kgo.Opt, error) {
	name := d.mechanism(c)
	if name == "" {
		return nil, nil
	}
	m, err := Mechanism(name, c.Username, c.Password)
	if err != nil {
		return nil, err
	}
	return []kgo.Opt{kgo.SASL(m)}, nil
}

// refused explains err when the broker refused client c's SASL authentication, else returns it.
func (d *driver) refused(c drivers.Client, err error) error {
	if name := d.mechanism(c); name != "" {
		if re := refusal.KafkaSASL(err, string(name), c.Username, c.ID, d.cfg.Address); re != nil {
			return re
		}
	}
	return err
}
