package resources

import (
	"fmt"
	"net"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/plan"
)

// GroupNetworkChaos are the NetworkChaos objects of the groups behind links of their own (each
// in a worker set of its own, plan.Placement; netem.GroupNetworkChaos): a group's link between its worker pod and what
// its clients reach, its gateway or the broker.
func GroupNetworkChaos(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, s := range p.Placement() {
		if !s.Linked() {
			continue
		}
		g := p.SetGroups(s)[0]
		server, external := Selector(mb, v1alpha1.ComponentBroker), ""
		if g.Gateway != "" {
			server = GatewaySelector(mb, p, g.Gateway)
		} else if mb.Spec.Broker.Type == v1alpha1.BrokerExternal && mb.Spec.Broker.External != nil {
			host, _, err := net.SplitHostPort(mb.Spec.Broker.External.Address)
			if err != nil {
				return nil, fmt.Errorf("spec.broker.external.address: %w", err)
			}
			external = host
		}
		o, err := netem.GroupNetworkChaos(mb, g.Name, s.Network.Link, server, external)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o...)
	}
	return objs, nil
}
