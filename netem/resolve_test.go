package netem

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
func str(s string) *string                 { return &s }
func i32(v int32) *int32                   { return &v }

// TestProfilesMatchTheDesignTable restates docs/network-profiles.md number by number, so a preset
// cannot drift from its documented source unnoticed.
func TestProfilesMatchTheDesignTable(t *testing.T) {
	type row struct {
		upDelay, downDelay, jitter time.Duration
		loss                       Fraction // per direction
		upRate, downRate           int64
		mtu                        int
	}
	want := map[v1alpha1.NetworkProfile]row{
		"nb-iot":    {200 * ms, 400 * ms, 15 * ms, 0, 60_000, 30_000, 296},
		"lte-m":     {50 * ms, 50 * ms, 10 * ms, 0, 1_000_000, 1_000_000, 0},
		"lte":       {23 * ms, 23 * ms, 15 * ms, 0, 15_000_000, 43_000_000, 0},
		"5g-sa":     {28 * ms, 28 * ms, 4 * ms, 0, 88_000_000, 98_000_000, 0},
		"5g-urban":  {10 * ms, 10 * ms, 2 * ms, 1_000_000, 100_000_000, 100_000_000, 0},
		"cell-edge": {60 * ms, 60 * ms, 10 * ms, 10_000_000, 5_000_000, 5_000_000, 0},
		"congested": {100 * ms, 100 * ms, 20 * ms, 30_000_000, 1_000_000, 1_000_000, 0},
		"3g":        {150 * ms, 150 * ms, 20 * ms, 0, 700_000, 700_000, 0},
		"wifi":      {2 * ms, 2 * ms, 1 * ms, 0, 25_000_000, 25_000_000, 0},
		"satellite": {300 * ms, 300 * ms, 10 * ms, 5_000_000, 10_000_000, 10_000_000, 0},
		"none":      {},
	}
	if got := len(Profiles()); got != len(want) {
		t.Fatalf("%d presets, the design table has %d", got, len(want))
	}
	for _, p := range Profiles() {
		w, ok := want[p.Name]
		if !ok {
			t.Errorf("preset %q is not in the design table", p.Name)
			continue
		}
		wantLink := Link{
			Up:   Impairment{Delay: w.upDelay, Jitter: w.jitter, Loss: w.loss, RateBitsPerSecond: w.upRate},
			Down: Impairment{Delay: w.downDelay, Jitter: w.jitter, Loss: w.loss, RateBitsPerSecond: w.downRate},
			MTU:  w.mtu,
		}
		if p.Link != wantLink {
			t.Errorf("preset %s = %+v, want %+v", p.Name, p.Link, wantLink)
		}
		if p.Source == "" {
			t.Errorf("preset %s has no source", p.Name)
		}
		// The API's enum must know every preset.
		got, err := Resolve(v1alpha1.NetworkSpec{Profile: p.Name})
		if err != nil || got != wantLink {
			t.Errorf("Resolve(profile %s) = %+v, %v", p.Name, got, err)
		}
	}
}

func TestResolve(t *testing.T) {
	lte, _ := LookupProfile("lte")
	tests := []struct {
		name string
		spec v1alpha1.NetworkSpec
		want Link
	}{
		{name: "empty spec is no impairment", spec: v1alpha1.NetworkSpec{}, want: Link{}},
		{name: "custom starts from nothing", spec: v1alpha1.NetworkSpec{
			Profile:  "custom",
			LinkSpec: v1alpha1.LinkSpec{Delay: dur(5 * ms), LossPercent: str("0.5")},
		}, want: Link{
			Up:   Impairment{Delay: 5 * ms, Loss: 5_000_000},
			Down: Impairment{Delay: 5 * ms, Loss: 5_000_000},
		}},
		{name: "explicit fields override the profile in both directions", spec: v1alpha1.NetworkSpec{
			Profile:  "lte",
			LinkSpec: v1alpha1.LinkSpec{Jitter: dur(0), Bandwidth: str("2mbit"), DuplicatePercent: str("1")},
		}, want: Link{
			Up:   Impairment{Delay: 23 * ms, Duplicate: 10_000_000, RateBitsPerSecond: 2_000_000},
			Down: Impairment{Delay: 23 * ms, Duplicate: 10_000_000, RateBitsPerSecond: 2_000_000},
		}},
		{name: "0bit lifts the profile's rate", spec: v1alpha1.NetworkSpec{
			Profile: "lte", LinkSpec: v1alpha1.LinkSpec{Bandwidth: str("0bit")},
		}, want: Link{
			Up:   Impairment{Delay: 23 * ms, Jitter: 15 * ms},
			Down: Impairment{Delay: 23 * ms, Jitter: 15 * ms},
		}},
		{name: "up and down blocks override one direction after the shared fields", spec: v1alpha1.NetworkSpec{
			Profile:  "custom",
			LinkSpec: v1alpha1.LinkSpec{Delay: dur(5 * ms), Jitter: dur(1 * ms)},
			Up:       &v1alpha1.LinkSpec{Delay: dur(35 * ms), LossPercent: str("1"), Bandwidth: str("2mbit")},
			Down:     &v1alpha1.LinkSpec{Bandwidth: str("20mbit"), CorruptPercent: str("0.01")},
		}, want: Link{
			Up:   Impairment{Delay: 35 * ms, Jitter: 1 * ms, Loss: 10_000_000, RateBitsPerSecond: 2_000_000},
			Down: Impairment{Delay: 5 * ms, Jitter: 1 * ms, Corrupt: 100_000, RateBitsPerSecond: 20_000_000},
		}},
		{name: "direction to clears the downlink", spec: v1alpha1.NetworkSpec{
			Profile: "lte", Direction: v1alpha1.DirectionTo,
		}, want: Link{Up: lte.Link.Up}},
		{name: "direction from clears the uplink, mtu stays", spec: v1alpha1.NetworkSpec{
			Profile: "nb-iot", Direction: v1alpha1.DirectionFrom,
		}, want: Link{
			Down: Impairment{Delay: 400 * ms, Jitter: 15 * ms, RateBitsPerSecond: 30_000},
			MTU:  296,
		}},
		{name: "direction clears even an explicit block", spec: v1alpha1.NetworkSpec{
			Profile: "custom", Direction: v1alpha1.DirectionTo,
			Down: &v1alpha1.LinkSpec{Delay: dur(9 * ms)},
		}, want: Link{}},
		{name: "mtuBytes overrides the profile's MTU", spec: v1alpha1.NetworkSpec{
			Profile: "nb-iot", MTUBytes: i32(1280), Direction: v1alpha1.DirectionBoth,
		}, want: Link{
			Up:   Impairment{Delay: 200 * ms, Jitter: 15 * ms, RateBitsPerSecond: 60_000},
			Down: Impairment{Delay: 400 * ms, Jitter: 15 * ms, RateBitsPerSecond: 30_000},
			MTU:  1280,
		}},
		{name: "reorder with a delay", spec: v1alpha1.NetworkSpec{
			Profile: "custom", LinkSpec: v1alpha1.LinkSpec{Delay: dur(10 * ms), ReorderPercent: str("25")},
		}, want: Link{
			Up:   Impairment{Delay: 10 * ms, Reorder: 250_000_000},
			Down: Impairment{Delay: 10 * ms, Reorder: 250_000_000},
		}},
		{name: "gilbertElliott with its defaults replaces the profile's loss", spec: v1alpha1.NetworkSpec{
			Profile:  "congested",
			LinkSpec: v1alpha1.LinkSpec{GilbertElliott: &v1alpha1.GilbertElliottSpec{GoodToBadPercent: "1", BadToGoodPercent: "25"}},
		}, want: Link{
			Up:   Impairment{Delay: 100 * ms, Jitter: 20 * ms, RateBitsPerSecond: 1_000_000, GilbertElliott: GilbertElliott{P: 10_000_000, R: 250_000_000, LossInBad: FractionOne}},
			Down: Impairment{Delay: 100 * ms, Jitter: 20 * ms, RateBitsPerSecond: 1_000_000, GilbertElliott: GilbertElliott{P: 10_000_000, R: 250_000_000, LossInBad: FractionOne}},
		}},
		{name: "a direction's lossPercent clears the shared gilbertElliott, and the reverse", spec: v1alpha1.NetworkSpec{
			Profile: "custom",
			LinkSpec: v1alpha1.LinkSpec{GilbertElliott: &v1alpha1.GilbertElliottSpec{
				GoodToBadPercent: "0.5", BadToGoodPercent: "50", LossInBadPercent: str("80"), LossInGoodPercent: str("0.1"),
			}},
			Up: &v1alpha1.LinkSpec{LossPercent: str("2")},
		}, want: Link{
			Up:   Impairment{Loss: 20_000_000},
			Down: Impairment{GilbertElliott: GilbertElliott{P: 5_000_000, R: 500_000_000, LossInBad: 800_000_000, LossInGood: 1_000_000}},
		}},
		{name: "a direction's gilbertElliott clears the profile's lossPercent", spec: v1alpha1.NetworkSpec{
			Profile: "custom", LinkSpec: v1alpha1.LinkSpec{LossPercent: str("3")},
			Down: &v1alpha1.LinkSpec{GilbertElliott: &v1alpha1.GilbertElliottSpec{GoodToBadPercent: "2", BadToGoodPercent: "20", LossInBadPercent: str("90")}},
		}, want: Link{
			Up:   Impairment{Loss: 30_000_000},
			Down: Impairment{GilbertElliott: GilbertElliott{P: 20_000_000, R: 200_000_000, LossInBad: 900_000_000}},
		}},
		{name: "correlations override field by field", spec: v1alpha1.NetworkSpec{
			Profile: "custom",
			LinkSpec: v1alpha1.LinkSpec{Delay: dur(10 * ms), Jitter: dur(2 * ms), LossPercent: str("1"), Correlation: &v1alpha1.CorrelationSpec{
				DelayPercent: str("25"), LossPercent: str("50"), DuplicatePercent: str("1"), CorruptPercent: str("2"), ReorderPercent: str("3"),
			}},
			Up: &v1alpha1.LinkSpec{Correlation: &v1alpha1.CorrelationSpec{LossPercent: str("75")}},
		}, want: Link{
			Up: Impairment{Delay: 10 * ms, Jitter: 2 * ms, Loss: 10_000_000, Correlation: Correlation{
				Delay: 250_000_000, Loss: 750_000_000, Duplicate: 10_000_000, Corrupt: 20_000_000, Reorder: 30_000_000}},
			Down: Impairment{Delay: 10 * ms, Jitter: 2 * ms, Loss: 10_000_000, Correlation: Correlation{
				Delay: 250_000_000, Loss: 500_000_000, Duplicate: 10_000_000, Corrupt: 20_000_000, Reorder: 30_000_000}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Resolve = %+v\nwant      %+v", got, tt.want)
			}
		})
	}
}

// TestImpairmentIsZero: correlations alone change nothing, a loss model does.
func TestImpairmentIsZero(t *testing.T) {
	if !(Impairment{Correlation: Correlation{Loss: 500_000_000, Delay: 1}}).IsZero() {
		t.Error("correlations alone count as an impairment")
	}
	ge := Impairment{GilbertElliott: GilbertElliott{P: 1, R: 1}}
	if ge.IsZero() || !ge.HasNetem() {
		t.Error("a Gilbert-Elliott model counts as no impairment")
	}
	if (Impairment{RateBitsPerSecond: 1, Correlation: Correlation{Loss: 1}}).HasNetem() {
		t.Error("a rate with a correlation counts as netem")
	}
}

func TestImpairmentMayLose(t *testing.T) {
	for _, c := range []struct {
		imp  Impairment
		want bool
	}{
		{Impairment{}, false},
		{Impairment{Loss: 1}, true},
		{Impairment{Corrupt: FractionOne, Duplicate: 1}, false},
		{Impairment{GilbertElliott: GilbertElliott{P: 1, R: 1, LossInBad: FractionOne}}, true},
		{Impairment{GilbertElliott: GilbertElliott{P: 0, R: 1, LossInBad: FractionOne}}, false}, // never turns bad
		{Impairment{GilbertElliott: GilbertElliott{P: 0, R: 1, LossInGood: 1}}, true},
		{Impairment{GilbertElliott: GilbertElliott{P: 1, R: 1}}, false}, // loses in no state
	} {
		if got := c.imp.MayLose(); got != c.want {
			t.Errorf("%+v.MayLose() = %v, want %v", c.imp, got, c.want)
		}
	}
}

func TestGilbertElliottStationaryLoss(t *testing.T) {
	g := GilbertElliott{P: 10_000_000, R: 250_000_000, LossInBad: FractionOne}
	if got, want := g.StationaryLoss(), 0.01/0.26; got < want-1e-12 || got > want+1e-12 {
		t.Errorf("StationaryLoss = %v, want %v", got, want)
	}
	g = GilbertElliott{P: 50_000_000, R: 450_000_000, LossInBad: 500_000_000, LossInGood: 10_000_000}
	if got, want := g.StationaryLoss(), (0.05*0.5+0.45*0.01)/0.5; got < want-1e-12 || got > want+1e-12 {
		t.Errorf("StationaryLoss = %v, want %v", got, want)
	}
}

func TestResolveErrorsNameTheField(t *testing.T) {
	tests := []struct {
		name string
		spec v1alpha1.NetworkSpec
		want string
	}{
		{"unknown profile", v1alpha1.NetworkSpec{Profile: "edge"}, `spec.network.profile: unknown profile "edge"`},
		{"none with fields", v1alpha1.NetworkSpec{Profile: "none", LinkSpec: v1alpha1.LinkSpec{Delay: dur(ms)}}, "spec.network.profile: none applies no impairment"},
		{"none with a block", v1alpha1.NetworkSpec{Profile: "none", Up: &v1alpha1.LinkSpec{}}, "spec.network.profile: none"},
		{"bad loss", v1alpha1.NetworkSpec{LinkSpec: v1alpha1.LinkSpec{LossPercent: str("2%")}}, `spec.network.lossPercent: "2%" is not a percentage`},
		{"bad up duplicate", v1alpha1.NetworkSpec{Up: &v1alpha1.LinkSpec{DuplicatePercent: str("101")}}, "spec.network.up.duplicatePercent: \"101\" is above 100 %"},
		{"bad down corrupt", v1alpha1.NetworkSpec{Down: &v1alpha1.LinkSpec{CorruptPercent: str("x")}}, "spec.network.down.corruptPercent:"},
		{"bad reorder", v1alpha1.NetworkSpec{LinkSpec: v1alpha1.LinkSpec{ReorderPercent: str("-1")}}, "spec.network.reorderPercent:"},
		{"byte rate", v1alpha1.NetworkSpec{Down: &v1alpha1.LinkSpec{Bandwidth: str("1mbps")}}, "spec.network.down.bandwidth: \"1mbps\": use bit units"},
		{"negative delay", v1alpha1.NetworkSpec{LinkSpec: v1alpha1.LinkSpec{Delay: dur(-ms)}}, "spec.network.delay: -1ms is negative"},
		{"huge jitter", v1alpha1.NetworkSpec{Up: &v1alpha1.LinkSpec{Jitter: dur(2 * time.Hour)}}, "spec.network.up.jitter: 2h0m0s is above the maximum"},
		{"bad direction", v1alpha1.NetworkSpec{Direction: "up"}, `spec.network.direction: "up" is not one of`},
		{"small mtu", v1alpha1.NetworkSpec{MTUBytes: i32(67)}, "spec.network.mtuBytes: 67 is outside 68..65535"},
		{"jitter without delay", v1alpha1.NetworkSpec{Up: &v1alpha1.LinkSpec{Jitter: dur(ms)}}, "spec.network.up.jitter: jitter varies the delay, so it needs a delay"},
		{"lossPercent and gilbertElliott together", v1alpha1.NetworkSpec{Up: &v1alpha1.LinkSpec{LossPercent: str("1"),
			GilbertElliott: &v1alpha1.GilbertElliottSpec{GoodToBadPercent: "1", BadToGoodPercent: "10"}}}, "spec.network.up.gilbertElliott: set either lossPercent"},
		{"badToGoodPercent 0", v1alpha1.NetworkSpec{LinkSpec: v1alpha1.LinkSpec{GilbertElliott: &v1alpha1.GilbertElliottSpec{
			GoodToBadPercent: "1", BadToGoodPercent: "0.000"}}}, "spec.network.gilbertElliott.badToGoodPercent: 0 would keep the link in the bad state"},
		{"bad lossInBadPercent", v1alpha1.NetworkSpec{Down: &v1alpha1.LinkSpec{GilbertElliott: &v1alpha1.GilbertElliottSpec{
			GoodToBadPercent: "1", BadToGoodPercent: "10", LossInBadPercent: str("150")}}}, "spec.network.down.gilbertElliott.lossInBadPercent: \"150\" is above 100 %"},
		{"missing goodToBadPercent", v1alpha1.NetworkSpec{LinkSpec: v1alpha1.LinkSpec{GilbertElliott: &v1alpha1.GilbertElliottSpec{
			BadToGoodPercent: "10"}}}, "spec.network.gilbertElliott.goodToBadPercent:"},
		{"bad correlation", v1alpha1.NetworkSpec{Up: &v1alpha1.LinkSpec{Correlation: &v1alpha1.CorrelationSpec{ReorderPercent: str("1e2")}}}, "spec.network.up.correlation.reorderPercent: \"1e2\" is not a percentage"},
		{"reorder without delay", v1alpha1.NetworkSpec{Down: &v1alpha1.LinkSpec{ReorderPercent: str("5")}}, "spec.network.down.reorderPercent: reordering needs a delay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Resolve(tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Resolve error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
