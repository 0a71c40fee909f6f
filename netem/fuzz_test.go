package netem

import (
	"regexp"
	"strings"
	"testing"
)

// The API's own patterns: whatever they admit, the parsers must take (bar the documented
// limits), so a manifest the API server accepts never fails a local run.
var (
	apiPercent  = regexp.MustCompile(`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]+)?)$`)
	apiRate     = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit)$`)
	apiDuration = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`)
)

func FuzzParsePercent(f *testing.F) {
	for _, s := range []string{"0", "2", "0.5", "100", "100.0", "12.3456789", "0.00000001", "1e3", "-1", "", "99.99999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParsePercent(s)
		if err != nil {
			if apiPercent.MatchString(s) && !strings.Contains(err.Error(), "decimal places") {
				t.Fatalf("ParsePercent(%q) refused what the API admits: %v", s, err)
			}
			return
		}
		if v > FractionOne {
			t.Fatalf("ParsePercent(%q) = %d, above 100 %%", s, v)
		}
		if back, err := ParsePercent(v.Percent()); err != nil || back != v {
			t.Fatalf("ParsePercent(%q) = %d, formats as %q, parses back as %d, %v", s, v, v.Percent(), back, err)
		}
	})
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"60kbit", "1.5mbit", "0bit", "1000gbit", "1001gbit", "0.4bit", "1mbps", "2.5bit", "0.000000001gbit"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseRate(s)
		if err != nil {
			if apiRate.MatchString(s) && !strings.Contains(err.Error(), "above the maximum") && !strings.Contains(err.Error(), "below 1bit") {
				t.Fatalf("ParseRate(%q) refused what the API admits: %v", s, err)
			}
			return
		}
		if v < 0 || v > MaxRateBitsPerSecond {
			t.Fatalf("ParseRate(%q) = %d, out of range", s, v)
		}
		if back, err := ParseRate(FormatRate(v)); err != nil || back != v {
			t.Fatalf("ParseRate(%q) = %d, formats as %q, parses back as %d, %v", s, v, FormatRate(v), back, err)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"200ms", "1m30s", "1.5s", "250µs", "-5ms", "61m", "1h", "9999999999999h", "0.000000001ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if apiDuration.MatchString(s) && !strings.Contains(err.Error(), "above the maximum") {
				t.Fatalf("ParseDuration(%q) refused what the API admits: %v", s, err)
			}
			return
		}
		if d < 0 || d > MaxDelay || !apiDuration.MatchString(s) {
			t.Fatalf("ParseDuration(%q) = %v, out of range or not an API duration", s, d)
		}
		if back, err := ParseDuration(FormatDuration(d)); err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v, formats as %q, parses back as %v, %v", s, d, FormatDuration(d), back, err)
		}
	})
}
