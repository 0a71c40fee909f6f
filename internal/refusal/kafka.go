package refusal

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// KafkaSASL explains err when a Kafka broker refused a client's SASL authentication as user with
// mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512); nil when err is no such refusal. client names
// the msgbench client, address the broker. The user name is in the words, never the password.
func KafkaSASL(err error, mechanism, user, client, address string) *Error {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return nil
	}
	detail := fmt.Sprintf("user %s (client %s at %s)", user, client, address)
	if msg := brokerMessage(err, ke); msg != "" {
		detail += fmt.Sprintf(", the broker saying %q", msg)
	}
	switch ke.Code {
	case kerr.SaslAuthenticationFailed.Code:
		return &Error{
			What:   fmt.Sprintf("Kafka broker refused SASL/%s authentication (SASL_AUTHENTICATION_FAILED)", mechanism),
			Detail: "SASL authentication failed for " + detail,
			Advice: "the devices' usernames and passwords (spec.identity) are not the broker's users: check the patterns or the credentials list (docs/identity.md) against the users the broker knows, and spec.identity.saslMechanism against how it stores them (a SCRAM user has no PLAIN password)",
			Err:    err,
		}
	case kerr.UnsupportedSaslMechanism.Code:
		return &Error{
			What:   fmt.Sprintf("Kafka broker does not take SASL/%s (UNSUPPORTED_SASL_MECHANISM)", mechanism),
			Detail: detail,
			Advice: "set spec.identity.saslMechanism to a mechanism the broker's listener enables (its sasl.enabled.mechanisms)",
			Err:    err,
		}
	case kerr.IllegalSaslState.Code:
		return &Error{
			What:   "Kafka broker takes no SASL on this listener (ILLEGAL_SASL_STATE)",
			Detail: detail,
			Advice: "the address is a listener without authentication (PLAINTEXT or SSL): point spec.broker.external.address at the broker's SASL_PLAINTEXT or SASL_SSL listener, or leave the devices' credentials out",
			Err:    err,
		}
	}
	return nil
}

// brokerMessage is the broker's own words franz-go appended to the error code ("CODE: text").
func brokerMessage(err error, ke *kerr.Error) string {
	s := err.Error()
	i := strings.Index(s, ke.Error())
	if i < 0 {
		return ""
	}
	rest := strings.TrimPrefix(s[i+len(ke.Error()):], ": ")
	if rest == s[i+len(ke.Error()):] {
		return ""
	}
	return rest
}
