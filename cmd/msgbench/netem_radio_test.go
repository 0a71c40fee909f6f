package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNetemRadioFlagsToSpec(t *testing.T) {
	f := netemFlags{direction: "both", profile: "lte"}
	if spec, err := f.networkSpec(); err != nil || spec.Radio != nil {
		t.Errorf("no radio flag: radio %+v, %v", spec.Radio, err)
	}
	f.radio.on = true
	if spec, err := f.networkSpec(); err != nil || spec.Radio == nil || spec.Radio.InactivityTimer != nil {
		t.Errorf("--radio: radio %+v, %v; want the profile's numbers", spec.Radio, err)
	}
	f = netemFlags{direction: "both", profile: "nb-iot"}
	f.radio.paging = "20.48s"
	spec, err := f.networkSpec()
	if err != nil || spec.Radio == nil || spec.Radio.PagingCycle.Duration != 20480*time.Millisecond {
		t.Errorf("--radio-paging alone: radio %+v, %v", spec.Radio, err)
	}
}

func TestNetemRadioFlagErrorsNameTheFlag(t *testing.T) {
	for _, tt := range []struct {
		flags func(*netemFlags)
		want  string
	}{
		{func(f *netemFlags) { f.profile, f.radio.paging = "lte", "soon" }, "--radio-paging: \"soon\" is not a duration"},
		{func(f *netemFlags) { f.profile, f.radio.sleep = "lte", "25h" }, "--radio-psm: 25h0m0s is outside"},
		{func(f *netemFlags) { f.profile, f.radio.on = "wifi", true }, "only the nb-iot, lte-m, lte and 5g-sa profiles carry radio numbers"},
	} {
		f := netemFlags{direction: "both"}
		tt.flags(&f)
		_, err := runNetem(context.Background(), f, []string{"true"}, nil, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v, want one containing %q", err, tt.want)
		}
	}
}

// TestNetemRunWithRadioStates: ten round trips from a device whose radio starts idle; the first
// pays the promotion, the counters printed at the end say so.
func TestNetemRunWithRadioStates(t *testing.T) {
	needRoot(t)
	token := strconv.FormatInt(time.Now().UnixNano(), 36)
	f := netemFlags{profile: "custom", direction: "both", killWait: time.Second, serverCommand: helperCommand("echo", token)}
	f.link.delay = "5ms"
	f.radio.inactivity, f.radio.promotion = "10s", "300ms"
	var stdout, stderr bytes.Buffer
	code, err := runNetem(context.Background(), f, []string{"sh", "-c", helperCommand("rtt", token)}, nil, &stdout, &stderr)
	if err != nil || code != 0 {
		t.Fatalf("code %d, %v; stderr:\n%s", code, err, stderr.String())
	}
	t.Logf("stderr:\n%s", stderr.String())
	m := regexp.MustCompile(`radio: (\d+) devices, (\d+) promotions \(0 pagings, 0 PSM wake-ups\), \d+ packets held ([0-9.]+m?s) in all`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no radio counters printed")
	}
	held, err := time.ParseDuration(m[3])
	if m[1] != "1" || m[2] != "1" || err != nil || held < 300*time.Millisecond {
		t.Errorf("radio counters %q: want one device promoted once, holding at least 300 ms", m[0])
	}
	// The median of ten round trips is a connected one.
	if us, err := strconv.Atoi(strings.TrimSpace(stdout.String())); err != nil || us > 100_000 {
		t.Errorf("median round trip %q µs, want about 10 ms", stdout.String())
	}
}
