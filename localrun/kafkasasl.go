package localrun

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/plan"
)

// kafkaUsers are the users the local Kafka's SASL listener must know: every device of the
// Kafka groups that show credentials (spec.identity: the patterns filled with this run's id, or
// the listed lines), with the mechanisms the groups ask for; nil when no device authenticates.
// A user name given two passwords is refused: a Kafka user has one.
func (r *runner) kafkaUsers() (*kafka.SASL, error) {
	var s *kafka.SASL
	owner := map[string]string{} // user → the first client id that names it
	for i := range r.plan.Groups {
		g := &r.plan.Groups[i]
		if g.Identity == nil || g.Identity.SASLMechanism == "" {
			continue
		}
		if s == nil {
			s = &kafka.SASL{Users: map[string]string{}}
		}
		if m := string(g.Identity.SASLMechanism); !slices.Contains(s.Mechanisms, m) {
			s.Mechanisms = append(s.Mechanisms, m)
		}
		for _, pub := range []bool{true, false} {
			n := int(g.Publishers)
			if !pub {
				n = int(g.Subscribers)
			}
			for k := range n {
				id := g.DeviceClientID(pub, k, r.runID)
				if id == "" { // msgbench's default, as loadgen names the client
					id = "mb" + r.runID + "-" + map[bool]string{true: "p", false: "s"}[pub] + strconv.Itoa(k)
				}
				var c plan.Credential
				if g.Identity.Listed() {
					c = r.creds[g.Name][id] // loadCredentials checked that every device has its line
				} else {
					c = g.DeviceCredential(g.DeviceIndex(pub, k), r.runID, id)
				}
				if prev, ok := s.Users[c.Username]; ok && prev != c.Password {
					return nil, fmt.Errorf("spec.identity: devices %s and %s are both user %s, with different passwords; a Kafka user has one password (give each device its own username, or one password)", owner[c.Username], id, c.Username)
				}
				if _, ok := owner[c.Username]; !ok {
					owner[c.Username] = id
				}
				s.Users[c.Username] = c.Password
			}
		}
	}
	return s, nil
}
