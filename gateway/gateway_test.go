package gateway_test

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/plan"
)

// A setting a gateway holds once is its groups' when they agree, and refused naming the setting
// and both groups when they do not; clients add up over the groups.
func TestSharedAndClients(t *testing.T) {
	groups := []plan.Group{{Name: "sensors", QoS: 1, Publishers: 3, Subscribers: 4}, {Name: "meters", QoS: 1, Publishers: 5}}
	qos := func(g *plan.Group) int32 { return g.QoS }
	if q, err := gateway.Shared(groups, "spec.qos", qos); err != nil || q != 1 {
		t.Errorf("agreeing groups: %d, %v", q, err)
	}
	if q, err := gateway.Shared(nil, "spec.qos", qos); err != nil || q != 0 {
		t.Errorf("no groups: %d, %v", q, err)
	}
	groups[1].QoS = 2
	_, err := gateway.Shared(groups, "spec.qos", qos)
	if err == nil || !strings.Contains(err.Error(), "spec.qos") || !strings.Contains(err.Error(), `"sensors"`) || !strings.Contains(err.Error(), `"meters"`) {
		t.Errorf("groups of QoS 1 and 2: %v", err)
	}
	if n := gateway.Clients(groups); n != 12 {
		t.Errorf("%d clients, want 12", n)
	}
}
