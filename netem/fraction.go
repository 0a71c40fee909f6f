package netem

import (
	"fmt"
	"strconv"
	"strings"
)

// Fraction is a probability in parts per billion: 1_000_000_000 is 100 %. Integers keep the
// percentages users write ("0.1", "2.5") exact; netem's own resolution (1/2^32) is finer than
// the 7 decimal places of a percent this holds, so nothing is lost on the way to the kernel.
type Fraction uint32

// FractionOne is 100 %.
const FractionOne Fraction = 1_000_000_000

// percentDecimals is how many decimal places of a percent a Fraction holds exactly.
const percentDecimals = 7

// ParsePercent parses a decimal percentage such as "2", "0.5" or "100" (the form the
// MessagingBenchmark API and Chaos Mesh take) into an exact Fraction. It accepts digits with an
// optional fraction part and nothing else: no sign, exponent, spaces or "%".
func ParsePercent(s string) (Fraction, error) {
	intPart, fracPart, hasDot := strings.Cut(s, ".")
	if intPart == "" || !allDigits(intPart) || (hasDot && (fracPart == "" || !allDigits(fracPart))) {
		return 0, fmt.Errorf("%q is not a percentage: write digits with an optional decimal part, like \"2\" or \"0.5\"", s)
	}
	// Digits past the resolution must be zeros, so parsing never rounds silently.
	if len(fracPart) > percentDecimals {
		if strings.Trim(fracPart[percentDecimals:], "0") != "" {
			return 0, fmt.Errorf("%q has more than %d decimal places", s, percentDecimals)
		}
		fracPart = fracPart[:percentDecimals]
	}
	intPart = strings.TrimLeft(intPart, "0")
	if len(intPart) > 3 {
		return 0, fmt.Errorf("%q is above 100 %%", s)
	}
	whole, _ := strconv.ParseUint("0"+intPart, 10, 32)
	frac, _ := strconv.ParseUint(fracPart+strings.Repeat("0", percentDecimals-len(fracPart)), 10, 32)
	v := whole*10_000_000 + frac
	if v > uint64(FractionOne) {
		return 0, fmt.Errorf("%q is above 100 %%", s)
	}
	return Fraction(v), nil
}

// Percent formats f as the shortest decimal percentage that parses back to f: "2", "0.5".
func (f Fraction) Percent() string {
	whole, frac := uint32(f)/10_000_000, uint32(f)%10_000_000
	if frac == 0 {
		return strconv.FormatUint(uint64(whole), 10)
	}
	digits := fmt.Sprintf("%07d", frac)
	return strconv.FormatUint(uint64(whole), 10) + "." + strings.TrimRight(digits, "0")
}

// String formats f with a percent sign, for messages.
func (f Fraction) String() string { return f.Percent() + "%" }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
