package plan

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// Identity is who a group's devices are (spec.identity with spec.groups[].identity over it),
// resolved: the patterns of their client ids, usernames and passwords, and where their
// credentials are listed (docs/identity.md). A driver reads a device's id and credentials from
// its drivers.Client, which the load generator fills from this.
type Identity struct {
	// ClientID is the pattern of the devices' client ids; "" for msgbench's default (a fleet
	// group's is Fleet.ClientID, which holds this pattern when it is set).
	ClientID string
	// Username and Password are the patterns of the devices' credentials ("": none).
	Username, Password string
	// CredentialsFile (msgbench run; relative to the manifest's folder as written) or
	// CredentialsSecret (the operator: a Secret's key CredentialsKey) list each device's
	// username and password by client id.
	CredentialsFile, CredentialsSecret string
	// SASLMechanism is how a Kafka group's devices authenticate (PLAIN, SCRAM-SHA-256,
	// SCRAM-SHA-512): spec.identity.saslMechanism, PLAIN when unset; "" when the group is not
	// Kafka or its devices have no credentials.
	SASLMechanism v1alpha1.SASLMechanism
}

// CredentialsKey is the key of a credentials Secret (spec.identity.credentials.secretRef) whose
// lines the workers read.
const CredentialsKey = "credentials.csv"

// Authenticates reports whether the devices show the broker credentials.
func (id *Identity) Authenticates() bool {
	return id != nil && (id.Username != "" || id.CredentialsFile != "" || id.CredentialsSecret != "")
}

// Listed reports whether the devices' credentials are listed in a file or a Secret.
func (id *Identity) Listed() bool {
	return id != nil && (id.CredentialsFile != "" || id.CredentialsSecret != "")
}

// DeviceIndex is the {index} of the group's client of role (publisher or not) numbered index
// among its role's clients: the same number in a device group (which has one role); in a spec
// without groups the publishers come first, then the subscribers.
func (g *Group) DeviceIndex(publisher bool, index int) int {
	if g.Fleet != nil || publisher {
		return index
	}
	return int(g.Publishers) + index
}

// DeviceClientID is the client id the identity's pattern gives the group's client (publisher or
// not, numbered index among its role's clients) in run runID, "" when the group keeps msgbench's
// default (a spec without groups and without spec.identity.clientId).
func (g *Group) DeviceClientID(publisher bool, index int, runID string) string {
	if g.Fleet != nil {
		return g.ClientID(index, runID)
	}
	if g.Identity == nil || g.Identity.ClientID == "" {
		return ""
	}
	return expandIdentity(g.Identity.ClientID, g.DeviceIndex(publisher, index), g.Name, runID, "")
}

// Credential is a device's username and password.
type Credential struct{ Username, Password string }

// DeviceCredential is the username and password the identity's patterns give the group's device
// numbered device ({index}) with client id clientID; zero without patterns.
func (g *Group) DeviceCredential(device int, runID, clientID string) Credential {
	id := g.Identity
	if id == nil || id.Username == "" {
		return Credential{}
	}
	c := Credential{Username: expandIdentity(id.Username, device, g.Name, runID, clientID)}
	if id.Password != "" {
		c.Password = expandIdentity(id.Password, device, g.Name, runID, clientID)
	}
	return c
}

// Credentials are the lines of a credentials file or Secret: a device's username and password
// by its client id.
type Credentials map[string]Credential

// ReadCredentials reads lines clientId,username,password (CSV without quoting; a password may
// hold commas, as it is the rest of the line; blank lines and lines starting with # are
// skipped). name is the source, for errors, which never quote a password.
func ReadCredentials(r io.Reader, name string) (Credentials, error) {
	creds := Credentials{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		id, rest, ok := strings.Cut(line, ",")
		user, pass, ok2 := strings.Cut(rest, ",")
		id, user = strings.TrimSpace(id), strings.TrimSpace(user)
		if !ok || !ok2 || id == "" || user == "" {
			return nil, fmt.Errorf("%s line %d: want clientId,username,password (a username is required)", name, n)
		}
		if _, dup := creds[id]; dup {
			return nil, fmt.Errorf("%s line %d: client id %s is listed twice", name, n, id)
		}
		creds[id] = Credential{Username: user, Password: pass}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return creds, nil
}

// CheckCredentials checks that creds list every device of group g, in run runID, naming the
// first that is missing.
func (g *Group) CheckCredentials(creds Credentials, source string, runID string) error {
	for _, pub := range []bool{true, false} {
		n := int(g.Publishers)
		if !pub {
			n = int(g.Subscribers)
		}
		for i := range n {
			id := g.DeviceClientID(pub, i, runID)
			if _, ok := creds[id]; !ok {
				return fmt.Errorf("%s: no line for client id %s (group %s, device %d); each device needs a line clientId,username,password", source, id, g.Name, g.DeviceIndex(pub, i))
			}
		}
	}
	return nil
}

// expandIdentity fills pattern's placeholders (checked by checkIdentityPattern).
func expandIdentity(pattern string, index int, group, runID, clientID string) string {
	if !strings.Contains(pattern, "{") {
		return pattern
	}
	var b strings.Builder
	rest := pattern
	for {
		i := strings.IndexByte(rest, '{')
		j := strings.IndexByte(rest[max(i, 0):], '}')
		if i < 0 || j < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i])
		name := rest[i+1 : i+j]
		rest = rest[i+j+1:]
		switch {
		case name == "index":
			b.WriteString(strconv.Itoa(index))
		case strings.HasPrefix(name, "index:"):
			w, _ := strconv.Atoi(name[len("index:"):])
			s := strconv.Itoa(index)
			for k := len(s); k < w; k++ {
				b.WriteByte('0')
			}
			b.WriteString(s)
		case name == "group":
			b.WriteString(group)
		case name == "run":
			b.WriteString(runID)
		case name == "clientId":
			b.WriteString(clientID)
		default:
			b.WriteString("{" + name + "}")
		}
	}
}

// checkIdentityPattern refuses a placeholder pattern does not know; an id pattern (clientId)
// must hold {index}, and only credentials take {clientId}.
func checkIdentityPattern(field, pattern string, id bool) error {
	hasIndex := false
	rest := pattern
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return fmt.Errorf("%s: %q has a { without its }", field, pattern)
		}
		name := rest[i+1 : i+j]
		rest = rest[i+j+1:]
		switch {
		case name == "index":
			hasIndex = true
		case strings.HasPrefix(name, "index:"):
			w, err := strconv.Atoi(name[len("index:"):])
			if err != nil || w < 1 || w > 20 {
				return fmt.Errorf("%s: {%s}: the width of {index:N} is a number of digits, 1 to 20 ({index:05})", field, name)
			}
			hasIndex = true
		case name == "group", name == "run":
		case name == "clientId" && !id:
		default:
			known := "{index}, {index:N}, {group}, {run}"
			if !id {
				known += ", {clientId}"
			}
			return fmt.Errorf("%s: {%s} is not a placeholder; a pattern takes %s", field, name, known)
		}
	}
	if id && !hasIndex {
		return fmt.Errorf("%s: %q has no {index}: every device would get the same client id, and on an MQTT broker two clients with one id take each other's connection; put {index} (or {index:N}) in it", field, pattern)
	}
	return nil
}

// sourced is an identity field's value and the field it was written in.
type sourced struct{ value, field string }

// compileIdentity resolves the identity of group g: spec.identity with the device group dg's
// (nil without groups) over it, and dg's older clientID. It refuses what the group's protocol or
// target cannot do, naming the field. idField returns where the group's client id pattern was
// written ("" for the default), for the check across groups.
func compileIdentity(spec *v1alpha1.MessagingBenchmarkSpec, dg *v1alpha1.DeviceGroupSpec, g *Group, target Target) (idField string, err error) {
	var clientID, user, pass, file, secret, mech sourced
	apply := func(id *v1alpha1.IdentitySpec, field string) {
		if id == nil {
			return
		}
		set := func(s *sourced, v, name string) {
			if v != "" {
				*s = sourced{v, field + "." + name}
			}
		}
		set(&clientID, id.ClientID, "clientId")
		set(&mech, string(id.SASLMechanism), "saslMechanism")
		if id.Username != "" || id.Credentials != nil {
			// A group's credentials replace the spec's, whichever way each lists them.
			user, pass, file, secret = sourced{}, sourced{}, sourced{}, sourced{}
		}
		set(&user, id.Username, "username")
		set(&pass, id.Password, "password")
		if c := id.Credentials; c != nil {
			set(&file, c.File, "credentials.file")
			if c.SecretRef != nil {
				set(&secret, c.SecretRef.Name, "credentials.secretRef")
			}
		}
	}
	apply(spec.Identity, "spec.identity")
	if dg != nil {
		field := "spec.groups[" + dg.Name + "]"
		if dg.ClientID != "" {
			if dg.Identity != nil && dg.Identity.ClientID != "" {
				return "", fmt.Errorf("%s.identity.clientId: %s.clientID names the client ids too; keep one (identity.clientId)", field, field)
			}
			clientID = sourced{dg.ClientID, field + ".clientID"}
		}
		apply(dg.Identity, field+".identity")
	}
	if clientID.value == "" && user.value == "" && file.value == "" && secret.value == "" {
		if mech.value != "" {
			return "", fmt.Errorf("%s: the devices have no credentials to prove; set spec.identity.username and password, or credentials (or leave saslMechanism out)", mech.field)
		}
		return "", nil
	}
	if clientID.value != "" {
		if err := checkIdentityPattern(clientID.field, clientID.value, true); err != nil {
			return "", err
		}
	}
	for _, s := range []sourced{user, pass} {
		if s.value != "" {
			if err := checkIdentityPattern(s.field, s.value, false); err != nil {
				return "", err
			}
		}
	}
	if pass.value != "" && user.value == "" {
		return "", fmt.Errorf("%s: MQTT sends a password only with a username; set username too", pass.field)
	}
	auth := user
	if auth.value == "" {
		auth = file
	}
	if auth.value == "" {
		auth = secret
	}
	if auth.value != "" {
		switch g.Protocol {
		case v1alpha1.ProtocolMQTTSN:
			return "", fmt.Errorf("%s: MQTT-SN 1.2's CONNECT carries no username or password (only a client id), so mqtt-sn devices cannot show credentials; the gateway connects to the broker for them. Leave the credentials out for protocol mqtt-sn", auth.field)
		case v1alpha1.ProtocolKafka:
			if err := checkKafkaSASL(spec, auth, mech, target); err != nil {
				return "", err
			}
			if mech.value == "" {
				mech.value = string(v1alpha1.SASLPlain)
			}
		}
	}
	if mech.value != "" && auth.value == "" {
		return "", fmt.Errorf("%s: the devices have no credentials to prove; set spec.identity.username and password, or credentials (or leave saslMechanism out)", mech.field)
	}
	if mech.value != "" && g.Protocol != v1alpha1.ProtocolKafka {
		return "", fmt.Errorf("%s: SASL is how Kafka clients authenticate; protocol %s shows the credentials its own way (docs/identity.md): leave saslMechanism out", mech.field, g.Protocol)
	}
	if file.value != "" && target == Kubernetes {
		return "", fmt.Errorf("%s: a file on this machine is not in the worker pods; put it in a Secret (kubectl create secret generic NAME --from-file=%s=%s) and set credentials.secretRef", file.field, CredentialsKey, file.value)
	}
	if secret.value != "" && target == Local {
		return "", fmt.Errorf("%s: msgbench run reads no Kubernetes Secret; list the credentials in a file (credentials.file, relative to the manifest)", secret.field)
	}
	if (file.value != "" || secret.value != "") && (clientID.value == "" || strings.Contains(clientID.value, "{run}")) {
		f := clientID.field
		if f == "" {
			f = strings.TrimSuffix(strings.TrimSuffix(file.field+secret.field, ".credentials.file"), ".credentials.secretRef") + ".clientId"
		}
		return "", fmt.Errorf("%s: the credentials are listed by client id, and these ids hold the run's random id ({run}%s), which no list can know; set a clientId pattern without {run}", f, map[bool]string{true: ", msgbench's default", false: ""}[clientID.value == ""])
	}
	g.Identity = &Identity{ClientID: clientID.value, Username: user.value, Password: pass.value, CredentialsFile: file.value, CredentialsSecret: secret.value,
		SASLMechanism: v1alpha1.SASLMechanism(mech.value)}
	return clientID.field, nil
}

// runToken stands for the run's id when client ids are compared at compile time: a character
// no pattern holds, so {run} matches only {run}.
const runToken = "\x00"

// checkUniqueIDs refuses client id patterns of different groups that give two devices one id.
// Groups whose ids start or end with different literal text are told apart at once; the others'
// ids are compared one by one. fields[i] is where group i's pattern was written.
func checkUniqueIDs(p *Plan, fields []string) error {
	type shape struct{ prefix, suffix string }
	shapes := make([]shape, len(p.Groups))
	for i := range p.Groups {
		g := &p.Groups[i]
		pat := strings.NewReplacer("{group}", g.Name, "{run}", runToken).Replace(g.Fleet.ClientID)
		first := strings.Index(pat, "{index")
		last := strings.LastIndex(pat, "{index")
		shapes[i] = shape{pat[:first], pat[last+strings.IndexByte(pat[last:], '}')+1:]}
	}
	apart := func(a, b shape) bool {
		prefixes := strings.HasPrefix(a.prefix, b.prefix) || strings.HasPrefix(b.prefix, a.prefix)
		suffixes := strings.HasSuffix(a.suffix, b.suffix) || strings.HasSuffix(b.suffix, a.suffix)
		return !prefixes || !suffixes
	}
	var close []int
	for i := range shapes {
		for j := range shapes {
			if i != j && !apart(shapes[i], shapes[j]) {
				close = append(close, i)
				break
			}
		}
	}
	if len(close) == 0 {
		return nil
	}
	seen := map[string]int{}
	for _, i := range close {
		g := &p.Groups[i]
		for k := range int(g.Publishers + g.Subscribers) {
			id := g.ClientID(k, runToken)
			if o, dup := seen[id]; dup {
				og := &p.Groups[o]
				field := fields[i]
				if field == "" {
					field = fields[o]
				}
				return fmt.Errorf("%s: groups %s and %s would both have client id %s, and on an MQTT broker two clients with one id take each other's connection; put {group} in the pattern, or give each group its own spec.groups[].identity.clientId", field, og.Name, g.Name, strings.ReplaceAll(id, runToken, "{run}"))
			}
			seen[id] = i
		}
	}
	return nil
}

// checkKafkaSASL refuses Kafka credentials where msgbench cannot make them work: an unknown
// mechanism, and on Kubernetes the Strimzi Kafka msgbench runs (it has no SASL listener with
// the devices' users yet; an external Kafka takes them as given).
func checkKafkaSASL(spec *v1alpha1.MessagingBenchmarkSpec, auth, mech sourced, target Target) error {
	switch v1alpha1.SASLMechanism(mech.value) {
	case "", v1alpha1.SASLPlain, v1alpha1.SASLScramSHA256, v1alpha1.SASLScramSHA512:
	default:
		return fmt.Errorf("%s: %q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mech.field, mech.value)
	}
	if target == Kubernetes && spec.Broker.Type == v1alpha1.BrokerKafka {
		return fmt.Errorf("%s: on Kubernetes, the Strimzi Kafka msgbench runs has no SASL listener for the devices' users yet; run this spec with msgbench run (its local Kafka gets one), or point spec.broker at an external Kafka that knows the users (broker.type external)", auth.field)
	}
	return nil
}
