package netem

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxRateBitsPerSecond is the highest rate msgbench accepts: 1 Tbit/s is far above any link it
// emulates and keeps rate arithmetic clear of overflow.
const MaxRateBitsPerSecond int64 = 1_000_000_000_000

// rateUnits are tc's decimal bit units (tc reads "kbit" as 1000 bit/s), longest suffix first so
// "kbit" is not taken for "bit".
var rateUnits = []struct {
	suffix string
	bits   int64
}{
	{"gbit", 1_000_000_000},
	{"mbit", 1_000_000},
	{"kbit", 1_000},
	{"bit", 1},
}

// ParseRate parses a link rate such as "250kbit", "15mbit" or "1.5gbit" into bits per second.
// "0bit" is accepted and means no rate limit, so an explicit field can lift a profile's limit.
// Byte units (bps, kbps, …) are refused with a hint: tc and Chaos Mesh read "bps" as bytes per
// second, a factor of eight that silently ruins a benchmark. Fractions of a bit per second are
// rounded to the nearest bit.
func ParseRate(s string) (int64, error) {
	lower := strings.ToLower(s)
	if strings.HasSuffix(lower, "bps") {
		return 0, fmt.Errorf("%q: use bit units (bit, kbit, mbit, gbit); tc and Chaos Mesh read bps as bytes per second", s)
	}
	for _, u := range rateUnits {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		bits, err := scaleDecimal(num, u.bits)
		if err != nil {
			return 0, fmt.Errorf("%q is not a rate: %w", s, err)
		}
		if bits == 0 && strings.Trim(num, "0.") != "" {
			return 0, fmt.Errorf("%q is below 1bit", s)
		}
		return bits, nil
	}
	return 0, fmt.Errorf("%q is not a rate: write a number and a unit, bit, kbit, mbit or gbit, like \"250kbit\"", s)
}

// scaleDecimal returns round(num × unit) for a decimal string num, bounded by
// MaxRateBitsPerSecond, in exact integer arithmetic.
func scaleDecimal(num string, unit int64) (int64, error) {
	intPart, fracPart, hasDot := strings.Cut(num, ".")
	if intPart == "" || !allDigits(intPart) || (hasDot && (fracPart == "" || !allDigits(fracPart))) {
		return 0, fmt.Errorf("write digits with an optional decimal part before the unit")
	}
	intPart = strings.TrimLeft(intPart, "0")
	tooBig := fmt.Errorf("above the maximum of 1000gbit")
	if len(intPart) > 13 {
		return 0, tooBig
	}
	whole, _ := strconv.ParseInt("0"+intPart, 10, 64)
	if whole > MaxRateBitsPerSecond/unit {
		return 0, tooBig
	}
	v := whole * unit
	// Take the fraction digits down to a hundredth of a bit, enough to round exactly: the
	// rounding boundaries (k+0.5 bits) have at most that many decimals. Units and divisors are
	// powers of ten, so one divides the other.
	var rem, div int64 = 0, 1
	for i := 0; i < len(fracPart) && div <= unit*10; i++ {
		rem = rem*10 + int64(fracPart[i]-'0')
		div *= 10
	}
	if div <= unit {
		v += rem * (unit / div)
	} else {
		q := div / unit
		v += (rem + q/2) / q
	}
	if v > MaxRateBitsPerSecond {
		return 0, tooBig
	}
	return v, nil
}

// FormatRate formats bits per second with the largest unit that divides it exactly ("60kbit",
// "15mbit", "1500kbit"): Chaos Mesh takes only whole numbers before the unit.
func FormatRate(bitsPerSecond int64) string {
	for _, u := range rateUnits {
		if bitsPerSecond%u.bits == 0 && bitsPerSecond != 0 {
			return strconv.FormatInt(bitsPerSecond/u.bits, 10) + u.suffix
		}
	}
	return "0bit"
}
