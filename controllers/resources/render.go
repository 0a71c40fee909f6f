package resources

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/plan"
)

// Render returns every object the operator applies for mb, in the order it applies them.
// Secrets whose content is generated at run time (the control token, a generated TLS
// certificate) are left out: they differ on every run and hold keys. The spec is compiled first,
// as the operator does before it creates anything, and the builders that decide from the
// protocol read the plan.
func Render(mb *v1alpha1.MessagingBenchmark, cfg Config) ([]client.Object, error) {
	p, err := plan.CompileBenchmark(mb, plan.Kubernetes)
	if err != nil {
		return nil, err
	}
	var objs []client.Object
	spec, err := SpecConfigMap(mb, p)
	if err != nil {
		return nil, err
	}
	objs = append(objs, spec, WorkerServiceAccount(mb))
	if mb.Spec.Broker.Type.MQTTBroker() {
		broker, err := BrokerObjects(mb, p, cfg)
		if err != nil {
			return nil, err
		}
		objs = append(objs, broker...)
	}
	if mb.Spec.Broker.Type == v1alpha1.BrokerKafka {
		kafka, err := KafkaObjects(mb, p)
		if err != nil {
			return nil, err
		}
		objs = append(objs, kafka...)
	}
	for _, mode := range p.GatewayModes() {
		objs = append(objs, GatewayDeployment(mb, p, mode, cfg), GatewayService(mb, p, mode))
	}
	for _, j := range WorkersJobs(mb, p, cfg) {
		objs = append(objs, j)
	}
	chaos, err := netem.NetworkChaos(mb, p.Network.Link, p.DirectToBroker())
	if err != nil {
		return nil, err
	}
	groups, err := GroupNetworkChaos(mb, p)
	if err != nil {
		return nil, err
	}
	for _, c := range append(chaos, groups...) {
		c.SetOwnerReferences(OwnerReferences(mb))
		objs = append(objs, c)
	}
	return objs, nil
}

// GeneratedSecrets names the Secrets Render leaves out.
func GeneratedSecrets(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) []string {
	out := []string{NamesOf(mb).Control + " (control token)"}
	if p.NeedsCertificate() && (mb.Spec.TLS == nil || mb.Spec.TLS.SecretRef == nil) {
		out = append(out, NamesOf(mb).TLS+" (CA and server certificate)")
	}
	return out
}
