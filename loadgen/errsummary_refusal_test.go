package loadgen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/internal/refusal"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

// TestSummarizeRefusals: clients a broker refused for one reason are one cause in the summary —
// what the broker said, in words, the clients it hit, the first occurrence's detail (which
// client, which packet) and what to change, once — not "broker connection lost (EOF)" and not a
// line per client (each refusal's detail names its own client).
func TestSummarizeRefusals(t *testing.T) {
	var errs []error
	for i := range 8 {
		re := refusal.Explain(refusal.V5, refusal.PUBACK, 0x95, "", fmt.Sprintf("client run-p%d, PUBLISH of 273 bytes to t/%d", i, i))
		errs = append(errs, clientErr(drivers.Publisher, i, fmt.Errorf("drain: %w", re)))
	}
	errs = append(errs, clientErr(drivers.Subscriber, 2, refusal.Explain(refusal.V311, refusal.CONNACK, 5, "", "client run-s2")))
	got := summarizeErrors(errs, 16)
	for _, want := range []string{
		"broker refused PUBLISH: packet too large (PUBACK reason code 0x95) for 8 of 16 clients (publishers 0–7); first: client run-p0, PUBLISH of 273 bytes to t/0; a packet exceeded the broker's maximum packet or message size",
		"broker refused CONNECT: not authorized (CONNACK return code 5) for 1 of 16 clients (subscriber 2): client run-s2; msgbench's MQTT clients connect anonymously",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
	if strings.Count(got, "packet too large") != 1 {
		t.Errorf("one refusal cause shown more than once: %q", got)
	}
}
