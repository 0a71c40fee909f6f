package plan_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/plan"
)

// readMix reads the payload-mix sample with overrides.
func readMix(tb testing.TB, set ...string) *v1alpha1.MessagingBenchmarkSpec {
	tb.Helper()
	mb, err := manifest.ReadFile("../config/samples/fleets/payload-mix.yaml", set...)
	if err != nil {
		tb.Fatal(err)
	}
	return &mb.Spec
}

// mixGroups compiles the payload-mix sample (with overrides) and returns its groups by name.
func mixGroups(t *testing.T, set ...string) (*plan.Plan, map[string]*plan.Group) {
	t.Helper()
	p, err := plan.Compile(readMix(t, set...), plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]*plan.Group{}
	for i := range p.Groups {
		groups[p.Groups[i].Name] = &p.Groups[i]
	}
	return p, groups
}

// The sample's payloads compile to their distributions, resolved (a log-normal one's mu and
// sigma from its median and p99, a normal one's truncation at its 0.01st and 99.99th
// percentiles), and each group's PayloadBytes is its largest message: the template's longest
// rendering, the distributions' max; the subscribers take the largest of all.
func TestPayloadMixCompiles(t *testing.T) {
	_, g := mixGroups(t)
	gw := g["gateways"].Payload.Size
	if gw.Kind != plan.LogNormal || math.Abs(math.Exp(gw.Mu)-2048) > 1e-6 || math.Abs(math.Exp(gw.Mu+2.3263478740408408*gw.Sigma)-32768) > 1e-6 ||
		gw.Max != 262144 || gw.Min != 24 || g["gateways"].PayloadBytes != 262144 {
		t.Errorf("gateways: %+v, payloadBytes %d", gw, g["gateways"].PayloadBytes)
	}
	if m := g["meters"].Payload.Size; m.Kind != plan.Normal || m.Mean != 300 || m.StdDev != 40 || m.Min != 151 || m.Max != 449 || g["meters"].PayloadBytes != 449 {
		t.Errorf("meters: %+v", m)
	}
	if w := g["trackers"].Payload.Size; w.Kind != plan.Weighted || !slices.Equal(w.Sizes, []int{64, 512, 4096}) || !slices.Equal(w.Cumulative, []uint64{70, 95, 100}) || g["trackers"].PayloadBytes != 4096 {
		t.Errorf("trackers: %+v", w)
	}
	s := g["sensors"]
	tm := s.Payload.Template
	// sensor-{index}: at most sensor-199; counter: a uint32; timestamp: 13 digits.
	if tm == nil || s.Payload.Size != nil || tm.DeviceBytes != len("sensor-199") || tm.IndexDigits != 3 || tm.CounterDigits != 10 {
		t.Fatalf("sensors: %+v", s.Payload)
	}
	longest := tm.Append(nil, "sensor-199", 199, math.MaxUint32, 9999999999999)
	if int(s.PayloadBytes) != plan.HeaderBytes+len(longest) || s.Payload.MaxBytes != int(s.PayloadBytes) {
		t.Errorf("sensors: payloadBytes %d, want the header and the longest rendering, %d bytes (%s)", s.PayloadBytes, plan.HeaderBytes+len(longest), longest)
	}
	if g["backend"].PayloadBytes != 262144 || g["backend"].Payload != nil {
		t.Errorf("backend: payloadBytes %d, payload %+v; want the gateways' largest, 262144", g["backend"].PayloadBytes, g["backend"].Payload)
	}
}

// A worker reads the payload from the plan's wire form exactly as compiled.
func TestPayloadRoundTripsTheWireForm(t *testing.T) {
	p, _ := mixGroups(t)
	data, err := plan.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := plan.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, back) {
		t.Errorf("the plan read back differs:\n%+v\n%+v", p.Groups, back.Groups)
	}
}

// draws is how many sizes draw takes from a distribution.
const draws = 200000

// draw draws sizes from d with a generator of a fixed seed, sorted.
func draw(d *plan.SizeDistribution) []int {
	r := rand.New(rand.NewPCG(7, 1))
	out := make([]int, draws)
	for i := range out {
		out[i] = d.NextSize(r)
	}
	sort.Ints(out)
	return out
}

func meanOf(xs []int) float64 {
	var s float64
	for _, x := range xs {
		s += float64(x)
	}
	return s / float64(len(xs))
}

// Each distribution draws sizes in [min, max] with its shape: uniform's mean halfway, the
// normal's mean and standard deviation, the log-normal's median and 99th percentile, the
// weighted list's shares; and the same seed draws the same sizes.
func TestNextSizeFollowsTheDistribution(t *testing.T) {
	const n = draws
	_, g := mixGroups(t, "groups[meters].publish.payload.size={distribution: uniform, min: 100, max: 1100}")
	u := g["meters"].Payload.Size
	xs := draw(u)
	if xs[0] != 100 || xs[n-1] != 1100 || math.Abs(meanOf(xs)-600) > 3 {
		t.Errorf("uniform [100, 1100]: from %d to %d, mean %.1f; want 100, 1100 and 600±3", xs[0], xs[n-1], meanOf(xs))
	}

	_, g = mixGroups(t)
	nd := g["meters"].Payload.Size
	xs = draw(nd)
	var v float64
	m := meanOf(xs)
	for _, x := range xs {
		v += (float64(x) - m) * (float64(x) - m)
	}
	if sd := math.Sqrt(v / n); xs[0] < 151 || xs[n-1] > 449 || math.Abs(m-300) > 0.5 || math.Abs(sd-40) > 0.5 {
		t.Errorf("normal(300, 40) in [151, 449]: from %d to %d, mean %.2f, stddev %.2f", xs[0], xs[n-1], m, sd)
	}

	ln := g["gateways"].Payload.Size
	xs = draw(ln)
	// Truncated at 256 KiB (about the 99.97th percentile), so a hair more than half are below
	// the median and 99% below p99.
	median, p99 := xs[n/2], xs[n*99/100]
	if xs[0] < 24 || xs[n-1] > 262144 || math.Abs(float64(median)/2048-1) > 0.02 || math.Abs(float64(p99)/32768-1) > 0.05 {
		t.Errorf("lognormal(median 2048, p99 32768) in [24, 262144]: from %d to %d, median %d, p99 %d", xs[0], xs[n-1], median, p99)
	}

	w := g["trackers"].Payload.Size
	xs = draw(w)
	count := map[int]int{}
	for _, x := range xs {
		count[x]++
	}
	for size, share := range map[int]float64{64: 0.70, 512: 0.25, 4096: 0.05} {
		if got := float64(count[size]) / n; math.Abs(got-share) > 0.005 {
			t.Errorf("weighted: %d bytes %.4f of the sizes, want %.2f", size, got, share)
		}
	}
	if len(count) != 3 {
		t.Errorf("weighted: sizes %v", count)
	}

	for _, d := range []*plan.SizeDistribution{u, nd, ln, w} {
		r1, r2 := rand.New(rand.NewPCG(42, 1)), rand.New(rand.NewPCG(42, 1))
		for range 1000 {
			if a, b := d.NextSize(r1), d.NextSize(r2); a != b {
				t.Fatalf("%s: one seed drew %d and %d", d.Kind, a, b)
			}
		}
	}
}

// A template renders its placeholders, bound or not, to JSON; MaxLen bounds every rendering.
func TestTemplateRenders(t *testing.T) {
	_, g := mixGroups(t, `groups[sensors].publish.payload.template='{"id":"{device}","i":{index},"n":{counter},"t":{timestamp},"a":[{"b":{}}]}'`)
	tm := g["sensors"].Payload.Template
	got := string(tm.Append([]byte("HDR"), "sensor-7", 7, 42, 1764268865123))
	if want := `HDR{"id":"sensor-7","i":7,"n":42,"t":1764268865123,"a":[{"b":{}}]}`; got != want {
		t.Errorf("rendered %s, want %s", got, want)
	}
	bound := tm.Bind("sensor-7", 7)
	if len(bound.Parts) != 5 || string(bound.Append(nil, "", 0, 42, 1764268865123)) != got[3:] {
		t.Errorf("bound: %+v renders %s", bound.Parts, bound.Append(nil, "", 0, 42, 1764268865123))
	}
	var v struct {
		ID string `json:"id"`
		I  int    `json:"i"`
		N  uint32 `json:"n"`
		T  int64  `json:"t"`
	}
	out := tm.Append(nil, "sensor-199", 199, math.MaxUint32, 9999999999999)
	if err := json.Unmarshal(out, &v); err != nil || v.ID != "sensor-199" || v.N != math.MaxUint32 || len(out) != tm.MaxLen() || bound.MaxLen() < len(got)-3 {
		t.Errorf("%s: %v %+v; MaxLen %d, bound %d", out, err, v, tm.MaxLen(), bound.MaxLen())
	}
	// A device group with a message count: its counter needs no more digits than that.
	_, g = mixGroups(t, "groups[sensors].publish.messages=5000")
	if d := g["sensors"].Payload.Template.CounterDigits; d != 4 {
		t.Errorf("5000 messages: counter of %d digits, want 4", d)
	}
	// {run} in the client id counts the longest run id.
	_, g = mixGroups(t, "groups[sensors].clientID='{run}-s-{index}'")
	if d := g["sensors"].Payload.Template.DeviceBytes; d != plan.MaxRunIDBytes+len("-s-199") {
		t.Errorf("{run}-s-{index}: device of %d bytes", d)
	}
}

// A bad payload is refused before anything starts, naming its field: by the CRD's rules
// (admission) or by the compile.
func TestBadPayloadsAreRefusedNamingTheField(t *testing.T) {
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"groups[sensors].publish.payloadBytes=64"}, "payloadBytes: payload sets the messages' size"},
		{[]string{"groups[gateways].publish.payload.template='{}'"}, "template: a template's message is as long as it renders"},
		{[]string{"groups[gateways].publish.payload.size.mean=100"}, "mean: only a normal distribution has mean and stddev"},
		{[]string{"groups[trackers].publish.payload.size.min=20"}, "min: a weighted distribution's sizes are its values' bytes"},
		{[]string{"groups[meters].publish.payload.size.distribution=uniform"}, "min: a uniform distribution draws every size from min to max"},
		{[]string{"groups[meters].publish.payload.size.distribution=lognormal"}, "median: a lognormal distribution takes median and p99"},
		{[]string{"groups[trackers].publish.payload.size.distribution=normal"}, "mean: a normal distribution takes mean and stddev"},
		{[]string{"groups[meters].publish.payload.size.distribution=weighted"}, "values: a weighted distribution takes values"},
		{[]string{"groups[gateways].publish.payload.size.p99=1000"}, "p99: must be larger than median"},
		{[]string{"groups[meters].publish.payload.size.min=400"}, "mean: outside [min, max]"},
		{[]string{"groups[meters].publish.payload.size.max=15"}, "max"},
		{[]string{"groups[meters].publish.payload.size.max=16777217"}, "max"},
		{[]string{"groups[meters].publish.payload.size={distribution: uniform, min: 900, max: 100}"}, "max: smaller than min"},
		{[]string{"groups[trackers].publish.payload.size.values=[]"}, "values"},
		{[]string{"groups[trackers].publish.payload.size.values=[{bytes: 64, weight: 0}]"}, "weight"},
		// The compile's own rules.
		{[]string{"groups[meters].publish.payload.size={distribution: normal, mean: 300, stddev: 1000, min: 300, max: 300}"},
			"spec.groups[meters].publish.payload.size: [min, max] = [300, 300] holds 0.0399% of the normal distribution (mean 300, stddev 1000), and a size drawn outside is drawn again: widen it to hold at least 1%"},
		{[]string{"groups[meters].publish.payload.size={distribution: normal, mean: 30000, stddev: 10, max: 30010}"}, ""},
		{[]string{"groups[gateways].publish.payload.size.min=300000"}, "median: outside [min, max]"},
		{[]string{`groups[sensors].publish.payload.template='{"id":{device}}'`},
			`spec.groups[sensors].publish.payload.template: not JSON once its placeholders are filled in ({"id":d-0}): invalid character 'd' looking for beginning of value at byte 7: {device} is text, write "{device}"`},
		{[]string{`groups[sensors].publish.payload.template='{"id":"{devices}"}'`},
			"spec.groups[sensors].publish.payload.template: {devices} is no placeholder; they are {device}, {index}, {counter} and {timestamp}"},
		{[]string{`groups[sensors].publish.payload.template='{"n":{counter}'`}, "publish.payload.template: not JSON"},
		{[]string{`groups[sensors].clientID=s"{index}`}, `spec.groups[sensors].publish.payload.template: {device} is the device's client id, and the group's clientID ("s\"{index}") has '"'`},
	} {
		mb, err := manifest.ReadFile("../config/samples/fleets/payload-mix.yaml", c.set...)
		if err == nil {
			_, err = plan.Compile(&mb.Spec, plan.Local)
		}
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v, want it compiled", c.set, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.set, err, c.want)
		}
	}
}

// A spec built in Go skips admission: the compile refuses what the CRD's rules would, naming
// the field, rather than failing on a missing parameter.
func TestPayloadBuiltInGoIsChecked(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	for _, c := range []struct {
		payload v1alpha1.PayloadSpec
		want    string
	}{
		{v1alpha1.PayloadSpec{}, "spec.groups[meters].publish.payload.size: set size (a distribution of sizes, random content) or template"},
		{v1alpha1.PayloadSpec{Size: &v1alpha1.SizeDistribution{Distribution: "uniform", Min: i32(20)}}, "spec.groups[meters].publish.payload.size.max: a uniform distribution takes min and max; set max"},
		{v1alpha1.PayloadSpec{Size: &v1alpha1.SizeDistribution{Distribution: "normal", Mean: i32(20)}}, "spec.groups[meters].publish.payload.size.stddev: a normal distribution takes mean and stddev; set stddev"},
		{v1alpha1.PayloadSpec{Size: &v1alpha1.SizeDistribution{Distribution: "normal", Mean: i32(200), StdDev: i32(20), Median: i32(3)}}, "spec.groups[meters].publish.payload.size.median: a normal distribution takes mean, stddev, min, max, not median; remove median"},
		{v1alpha1.PayloadSpec{Size: &v1alpha1.SizeDistribution{Distribution: "uniform", Min: i32(8), Max: i32(20)}}, "spec.groups[meters].publish.payload.size.min: 8; between 16 and 16777216"},
		{v1alpha1.PayloadSpec{Size: &v1alpha1.SizeDistribution{Distribution: "normal", Mean: i32(300), StdDev: i32(40), Min: i32(500)}},
			"spec.groups[meters].publish.payload.size.min: 500 is above max's default, the distribution's 99.99th percentile (449); lower min or set max"},
		{v1alpha1.PayloadSpec{Size: &v1alpha1.SizeDistribution{Distribution: "normal", Mean: i32(300), StdDev: i32(40), Max: i32(100)}},
			"spec.groups[meters].publish.payload.size.max: 100 is below min's default, the distribution's 0.01st percentile (151); raise max or set min"},
		{v1alpha1.PayloadSpec{Size: &v1alpha1.SizeDistribution{Distribution: "lognormal", Median: i32(300), P99: i32(300)}},
			"spec.groups[meters].publish.payload.size.p99: 300; must be larger than median (300)"},
		{v1alpha1.PayloadSpec{Size: &v1alpha1.SizeDistribution{Distribution: "pareto"}}, `spec.groups[meters].publish.payload.size.distribution: "pareto"`},
		{v1alpha1.PayloadSpec{Size: &v1alpha1.SizeDistribution{Distribution: "weighted", Values: []v1alpha1.WeightedSize{{Bytes: 20, Weight: 0}}}}, "spec.groups[meters].publish.payload.size.values[0].weight: 0; at least 1"},
		{v1alpha1.PayloadSpec{Size: &v1alpha1.SizeDistribution{Distribution: "uniform", Min: i32(16), Max: i32(16)}, Template: "{}"}, "spec.groups[meters].publish.payload.template: a template's message is as long as it renders"},
	} {
		spec := readMix(t)
		for i := range spec.Groups {
			if spec.Groups[i].Name == "meters" {
				spec.Groups[i].Publish.Payload = &c.payload
			}
		}
		if _, err := plan.Compile(spec, plan.Local); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.payload, err, c.want)
		}
	}
}

var sink []byte

// BenchmarkTemplateAppend renders one message of the sample's sensors into a buffer reused
// from message to message, as a publisher does: bound to its device, or not.
func BenchmarkTemplateAppend(b *testing.B) {
	p, err := plan.Compile(readMix(b), plan.Local)
	if err != nil {
		b.Fatal(err)
	}
	tm := p.Groups[0].Payload.Template
	buf := make([]byte, 16, 16+tm.MaxLen())
	b.Run("bound", func(b *testing.B) {
		bound := tm.Bind("sensor-123", 123)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			buf = bound.Append(buf[:16], "", 0, uint32(i), 1764268865123+int64(i))
		}
		sink = buf
	})
	b.Run("unbound", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			buf = tm.Append(buf[:16], "sensor-123", 123, uint32(i), 1764268865123+int64(i))
		}
		sink = buf
	})
}

// BenchmarkNextSize draws one size from each of the sample's distributions.
func BenchmarkNextSize(b *testing.B) {
	spec := readMix(b, "groups[sensors].publish.payload={size: {distribution: uniform, min: 16, max: 1024}}")
	p, err := plan.Compile(spec, plan.Local)
	if err != nil {
		b.Fatal(err)
	}
	for _, g := range p.Groups {
		if g.Payload == nil {
			continue
		}
		d := g.Payload.Size
		b.Run(d.Kind, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n += d.NextSize(r)
			}
			if n == 0 {
				b.Fatal("nothing drawn")
			}
		})
	}
}
