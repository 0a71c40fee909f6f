package results

import (
	"testing"
	"time"
)

func TestCaveatThresholds(t *testing.T) {
	f := Float64
	for _, c := range []struct {
		name string
		got  *Caveat
		want string // caveat type, "" for none
	}{
		{"idle load generator", SaturationCaveat(0.5, nil, 10, 2, true), ""},
		{"load generator at 95 % of 2 cores", SaturationCaveat(19, nil, 10, 2, false), CaveatLoadGeneratorSaturated},
		{"load generator and broker fill the machine", SaturationCaveat(9, f(9.5), 10, 2, true), CaveatLoadGeneratorSaturated},
		{"broker elsewhere", SaturationCaveat(9, f(9.5), 10, 2, false), ""},
		{"nothing measured", SaturationCaveat(9, nil, 0, 2, true), ""},
		{"steal 1 %", StealCaveat(10*time.Millisecond, time.Second), ""},
		{"steal 5 %", StealCaveat(50*time.Millisecond, time.Second), CaveatCPUSteal},
		{"no steal counter", StealCaveat(0, 0), ""},
		{"retransmits on loopback", RetransmitCaveat(3, true, -1), CaveatRetransmits},
		{"retransmits on a lossy link", RetransmitCaveat(300, false, 0), ""},
		{"no retransmits", RetransmitCaveat(0, true, -1), ""},
		{"emulator 1.5 ms late at 0 RTT", EmulatorLateCaveat(1500*time.Microsecond, 3, 100, 0), ""},
		{"emulator 3 ms late at 10 ms RTT", EmulatorLateCaveat(3*time.Millisecond, 3, 100, 10*time.Millisecond), CaveatEmulatorLate},
		{"emulator 15 ms late at 400 ms RTT", EmulatorLateCaveat(15*time.Millisecond, 3, 100, 400*time.Millisecond), ""},
		{"emulator 385 ms late at 400 ms RTT", EmulatorLateCaveat(385*time.Millisecond, 30, 100, 400*time.Millisecond), CaveatEmulatorLate},
	} {
		got := ""
		if c.got != nil {
			got = c.got.Type
			if c.got.Message == "" {
				t.Errorf("%s: caveat without a message", c.name)
			}
		}
		if got != c.want {
			t.Errorf("%s: caveat %q, want %q", c.name, got, c.want)
		}
	}
}
