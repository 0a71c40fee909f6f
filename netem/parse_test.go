package netem

import (
	"strings"
	"testing"
	"time"
)

func TestParsePercent(t *testing.T) {
	tests := []struct {
		in      string
		want    Fraction
		wantErr string
	}{
		{in: "0", want: 0},
		{in: "2", want: 20_000_000},
		{in: "0.5", want: 5_000_000},
		{in: "0.1", want: 1_000_000},
		{in: "100", want: FractionOne},
		{in: "100.000", want: FractionOne},
		{in: "07", want: 70_000_000},
		{in: "0.0000001", want: 1},
		{in: "12.3456789", want: 123_456_789},
		{in: "3.00000000", want: 30_000_000},
		{in: "0.00000001", wantErr: "more than 7 decimal places"},
		{in: "100.1", wantErr: "above 100 %"},
		{in: "1000", wantErr: "above 100 %"},
		{in: "-1", wantErr: "not a percentage"},
		{in: "1e-3", wantErr: "not a percentage"},
		{in: "", wantErr: "not a percentage"},
		{in: ".5", wantErr: "not a percentage"},
		{in: "5.", wantErr: "not a percentage"},
		{in: "5%", wantErr: "not a percentage"},
		{in: " 5", wantErr: "not a percentage"},
	}
	for _, tt := range tests {
		got, err := ParsePercent(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParsePercent(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParsePercent(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestFractionPercent(t *testing.T) {
	tests := []struct {
		f    Fraction
		want string
	}{
		{0, "0"}, {FractionOne, "100"}, {5_000_000, "0.5"}, {1_000_000, "0.1"}, {30_000_000, "3"},
		{1, "0.0000001"}, {123_456_789, "12.3456789"}, {120_000_000, "12"}, {125_000_000, "12.5"},
	}
	for _, tt := range tests {
		if got := tt.f.Percent(); got != tt.want {
			t.Errorf("Fraction(%d).Percent() = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "60kbit", want: 60_000},
		{in: "15mbit", want: 15_000_000},
		{in: "1gbit", want: 1_000_000_000},
		{in: "700bit", want: 700},
		{in: "1.5mbit", want: 1_500_000},
		{in: "0.25kbit", want: 250},
		{in: "1.0005kbit", want: 1001}, // 1000.5 rounds half up
		{in: "1.0004kbit", want: 1000},
		{in: "2.5bit", want: 3},
		{in: "0bit", want: 0},
		{in: "0.0mbit", want: 0},
		{in: "1000gbit", want: MaxRateBitsPerSecond},
		{in: "1000.000000000001gbit", want: MaxRateBitsPerSecond},
		{in: "0.000000001gbit", want: 1},
		{in: "1001gbit", wantErr: "above the maximum"},
		{in: "99999999999999999999999bit", wantErr: "above the maximum"},
		{in: "0.4bit", wantErr: "below 1bit"},
		{in: "1mbps", wantErr: "bytes per second"},
		{in: "1kbps", wantErr: "bytes per second"},
		{in: "1Mbit", wantErr: "not a rate"},
		{in: "1 mbit", wantErr: "not a rate"},
		{in: "mbit", wantErr: "not a rate"},
		{in: "1.mbit", wantErr: "not a rate"},
		{in: "-1mbit", wantErr: "not a rate"},
		{in: "10", wantErr: "not a rate"},
		{in: "", wantErr: "not a rate"},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseRate(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatRate(t *testing.T) {
	tests := []struct {
		bits int64
		want string
	}{
		{60_000, "60kbit"}, {15_000_000, "15mbit"}, {1_500_000, "1500kbit"}, {700, "700bit"},
		{2_000_000_000, "2gbit"}, {1_001, "1001bit"}, {0, "0bit"},
	}
	for _, tt := range tests {
		if got := FormatRate(tt.bits); got != tt.want {
			t.Errorf("FormatRate(%d) = %q, want %q", tt.bits, got, tt.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "200ms", want: 200 * time.Millisecond},
		{in: "1.5s", want: 1500 * time.Millisecond},
		{in: "1m30s", want: 90 * time.Second},
		{in: "250us", want: 250 * time.Microsecond},
		{in: "250µs", want: 250 * time.Microsecond},
		{in: "0s", want: 0},
		{in: "1h", want: time.Hour},
		{in: "61m", wantErr: "above the maximum"},
		{in: "9999999999h", wantErr: "above the maximum"},
		{in: "-5ms", wantErr: "not a duration"},
		{in: "5", wantErr: "not a duration"},
		{in: ".5s", wantErr: "not a duration"},
		{in: "", wantErr: "not a duration"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseDuration(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{200 * time.Millisecond, "200ms"}, {90 * time.Second, "90000ms"}, {1500 * time.Microsecond, "1500us"},
		{1500, "1500ns"}, {0, "0ms"},
	}
	for _, tt := range tests {
		if got := FormatDuration(tt.d); got != tt.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
