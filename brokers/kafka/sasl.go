package kafka

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASL is a SASL listener's users and mechanisms: the devices' own usernames and passwords
// (spec.identity), each user known to every mechanism enabled.
type SASL struct {
	// Mechanisms are Kafka's names: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512.
	Mechanisms []string
	// Users are the passwords by username.
	Users map[string]string
}

// AdminUser is the user msgbench itself authenticates as on the SASL listener, to see it ready;
// its password is random per broker.
const AdminUser = "msgbench-admin"

// scramMechanisms are the SCRAM mechanisms Kafka knows, as kadm names them.
var scramMechanisms = map[string]kadm.ScramMechanism{
	"SCRAM-SHA-256": kadm.ScramSha256,
	"SCRAM-SHA-512": kadm.ScramSha512,
}

// check refuses a mechanism Kafka does not know and, for PLAIN, a user name the JAAS
// configuration cannot carry, and a password spanning lines.
func (s *SASL) check() error {
	if len(s.Mechanisms) == 0 {
		return fmt.Errorf("SASL listener: no mechanism")
	}
	for _, m := range s.Mechanisms {
		if _, scram := scramMechanisms[m]; !scram && m != "PLAIN" {
			return fmt.Errorf("spec.identity.saslMechanism: %q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", m)
		}
	}
	for _, u := range slices.Sorted(maps.Keys(s.Users)) {
		if u == "" || strings.ContainsAny(u+s.Users[u], "\r\n\x00") {
			return fmt.Errorf("spec.identity: user %q: a Kafka user name or password cannot be empty or span lines", u)
		}
		if slices.Contains(s.Mechanisms, "PLAIN") && !plainUser(u) {
			return fmt.Errorf("spec.identity: user %q: the Kafka msgbench runs lists SASL/PLAIN users in its JAAS configuration, whose option names take letters, digits, '.', '_', '-' and '$' only; rename the users, or set spec.identity.saslMechanism to SCRAM-SHA-256 or SCRAM-SHA-512, which take any name", u)
		}
	}
	return nil
}

// plainUser reports whether u can follow "user_" as a JAAS option name: Kafka's JaasConfig
// reads it as one java.io.StreamTokenizer word (letters, digits, '.', '-', '_', '$', '{', '}',
// and any character past Latin-1).
func plainUser(u string) bool {
	for _, r := range u {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._-$", r), r >= 0xA0:
		default:
			return false
		}
	}
	return true
}

// listenerName is the SASL listener's name in server.properties.
func (c Config) listenerName() string {
	if c.TLSPort > 0 || c.KeystoreFile != "" {
		return "SASL_SSL"
	}
	return "SASL_PLAINTEXT"
}

// renderSASL writes the SASL listener's settings: the mechanisms, and per mechanism its JAAS
// login module; PLAIN lists every user and password there (the file is the broker's own,
// mode 0600, removed with it), SCRAM users are created through the admin API once the broker
// runs (addSCRAMUsers).
func (c Config) renderSASL(b *strings.Builder) {
	w := func(k string, v any) { fmt.Fprintf(b, "%s=%v\n", k, propsEscape(fmt.Sprint(v))) }
	b.WriteString("# the devices authenticate as their own users (spec.identity) on the SASL listener\n")
	w("sasl.enabled.mechanisms", strings.Join(c.SASL.Mechanisms, ","))
	prefix := "listener.name." + strings.ToLower(c.listenerName()) + "."
	for _, m := range c.SASL.Mechanisms {
		if m != "PLAIN" {
			w(prefix+strings.ToLower(m)+".sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required;")
			continue
		}
		var jaas strings.Builder
		jaas.WriteString("org.apache.kafka.common.security.plain.PlainLoginModule required")
		for _, u := range slices.Sorted(maps.Keys(c.SASL.Users)) {
			fmt.Fprintf(&jaas, " user_%s=\"%s\"", u, jaasEscape(c.SASL.Users[u]))
		}
		jaas.WriteString(";")
		w(prefix+"plain.sasl.jaas.config", jaas.String())
	}
}

// jaasEscape quotes s inside a JAAS option's double quotes (java.io.StreamTokenizer's escapes).
func jaasEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// propsEscape writes s as a java.util.Properties value: Kafka reads server.properties as
// ISO-8859-1 with backslash escapes, so a backslash is doubled and any character outside
// printable ASCII is written \uXXXX (UTF-16).
func propsEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r >= 0x20 && r < 0x7F:
			b.WriteRune(r)
		default:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		}
	}
	return b.String()
}

// randomPassword is the admin user's password.
func randomPassword() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// addSCRAMUsers creates every user for each SCRAM mechanism enabled, through the admin API on
// the PLAINTEXT listener (KRaft keeps SCRAM credentials in its metadata log): one mechanism and
// at most a thousand users a request (a request names a user once).
func addSCRAMUsers(ctx context.Context, cl *kgo.Client, s *SASL) error {
	adm := kadm.NewClient(cl)
	users := slices.Sorted(maps.Keys(s.Users))
	for _, m := range s.Mechanisms {
		mech, ok := scramMechanisms[m]
		if !ok {
			continue
		}
		for rest := users; len(rest) > 0; {
			n := min(len(rest), 1000)
			upserts := make([]kadm.UpsertSCRAM, n)
			for i, u := range rest[:n] {
				upserts[i] = kadm.UpsertSCRAM{User: u, Mechanism: mech, Iterations: 4096, Password: s.Users[u]}
			}
			res, err := adm.AlterUserSCRAMs(ctx, nil, upserts)
			if err == nil {
				err = res.Error()
			}
			if err != nil {
				return fmt.Errorf("create the %s users: %w", m, err)
			}
			rest = rest[n:]
		}
	}
	return nil
}

// probeMechanism authenticates as AdminUser with mechanism m.
func probeMechanism(m, password string) sasl.Mechanism {
	switch m {
	case "SCRAM-SHA-256":
		return scram.Auth{User: AdminUser, Pass: password}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		return scram.Auth{User: AdminUser, Pass: password}.AsSha512Mechanism()
	}
	return plain.Auth{User: AdminUser, Pass: password}.AsMechanism()
}
