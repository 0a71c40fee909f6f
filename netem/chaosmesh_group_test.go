package netem

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// A group's link: names within 63 characters and distinct for two long group names alike in
// their first characters; its uplink refused toward an external broker only when it also has a
// downlink; Gilbert-Elliott refused naming the group.
func TestGroupNetworkChaos(t *testing.T) {
	mb := &v1alpha1.MessagingBenchmark{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("b", 40), Namespace: "ns"}}
	link, err := Resolve(v1alpha1.NetworkSpec{Profile: "lte"})
	if err != nil {
		t.Fatal(err)
	}
	server := map[string]string{v1alpha1.LabelComponent: v1alpha1.ComponentBroker}
	names := map[string]bool{}
	for _, g := range []string{"sensors", strings.Repeat("s", 40) + "-a", strings.Repeat("s", 40) + "-b"} {
		objs, err := GroupNetworkChaos(mb, g, link, server, "")
		if err != nil || len(objs) != 2 {
			t.Fatalf("%s: %d objects, %v", g, len(objs), err)
		}
		for _, o := range objs {
			if len(o.GetName()) > 63 || names[o.GetName()] || o.GetLabels()[v1alpha1.LabelGroup] != g {
				t.Errorf("%s: name %q (%d), labels %v", g, o.GetName(), len(o.GetName()), o.GetLabels())
			}
			names[o.GetName()] = true
		}
	}
	if _, err := GroupNetworkChaos(mb, "sensors", link, server, "10.0.0.1"); err == nil || !strings.Contains(err.Error(), "spec.groups[sensors].network.direction") {
		t.Errorf("external broker with a downlink: %v", err)
	}
	up := link
	up.Down = Impairment{}
	if objs, err := GroupNetworkChaos(mb, "sensors", up, server, "10.0.0.1"); err != nil || len(objs) != 1 || objs[0].Object["spec"].(map[string]any)["externalTargets"] == nil {
		t.Errorf("external broker, uplink only: %v, %v", objs, err)
	}
	ge := link
	ge.Up.GilbertElliott = GilbertElliott{P: FractionOne / 100, R: FractionOne / 3, LossInBad: FractionOne}
	if _, err := GroupNetworkChaos(mb, "sensors", ge, server, ""); err == nil || !strings.Contains(err.Error(), "spec.groups[sensors].network.gilbertElliott") {
		t.Errorf("Gilbert-Elliott: %v", err)
	}
}
