package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// Payload is what a publishing device group's messages are when spec.groups[].publish.payload
// varies them, compiled: sizes drawn from a distribution (random content), or content rendered
// from a JSON template. A group without it sends Group.PayloadBytes of random bytes.
//
// Every message starts with msgbench's HeaderBytes-byte header; a size counts it, and a
// template's message is the header followed by the rendered JSON.
type Payload struct {
	// Size draws each message's size; nil with a template.
	Size *SizeDistribution
	// Template renders each message's content after the header; nil with a size.
	Template *Template
	// MaxBytes is the largest message the group sends, header included (Group.PayloadBytes:
	// its subscribers' maximum packet size and buffers come from it).
	MaxBytes int
}

// The distributions of message sizes (v1alpha1.SizeDistribution).
const (
	Uniform   = "uniform"
	Normal    = "normal"
	LogNormal = "lognormal"
	Weighted  = "weighted"
)

// MaxPayloadBytes is the largest message a device group sends: 16 MiB.
const MaxPayloadBytes = 16 << 20

// SizeDistribution is a distribution of message sizes, checked, with every parameter resolved.
// Every size it draws is in [Min, Max] and at least HeaderBytes.
type SizeDistribution struct {
	// Kind is Uniform, Normal, LogNormal or Weighted.
	Kind string
	// Min and Max bound the sizes: a uniform distribution's range, a normal or log-normal one's
	// truncation (a size drawn outside is drawn again), a weighted one's smallest and largest.
	Min, Max int
	// Mean and StdDev are a normal distribution's, in bytes.
	Mean, StdDev float64
	// Mu and Sigma are a log-normal distribution's: the mean and standard deviation of the
	// size's natural logarithm (Mu = ln median, Sigma = ln(p99/median)/z₀.₉₉).
	Mu, Sigma float64
	// Sizes and Cumulative are a weighted distribution's: size i is drawn when a number drawn
	// uniformly below the last cumulative weight is below Cumulative[i] and not Cumulative[i-1].
	Sizes      []int
	Cumulative []uint64
}

// z99 and z9999 are the standard normal distribution's 99th and 99.99th percentiles.
const (
	z99   = 2.3263478740408408
	z9999 = 3.7190164854556804
)

// minMass is the least share of a truncated distribution its [min, max] must hold: a size drawn
// outside is drawn again, at most 1/minMass times on average.
const minMass = 0.01

// NextSize draws the next message's size from d with r. It depends on r's state only, so a
// publisher with its own seeded r sends the same sizes in every run; it does not allocate.
func (d *SizeDistribution) NextSize(r *rand.Rand) int {
	switch d.Kind {
	case Uniform:
		return d.Min + r.IntN(d.Max-d.Min+1)
	case Normal:
		for {
			if x := math.Round(d.Mean + d.StdDev*r.NormFloat64()); x >= float64(d.Min) && x <= float64(d.Max) {
				return int(x)
			}
		}
	case LogNormal:
		for {
			if x := math.Round(math.Exp(d.Mu + d.Sigma*r.NormFloat64())); x >= float64(d.Min) && x <= float64(d.Max) {
				return int(x)
			}
		}
	case Weighted:
		u := r.Uint64N(d.Cumulative[len(d.Cumulative)-1])
		lo, hi := 0, len(d.Cumulative)-1 // the first i with u < Cumulative[i]
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if u < d.Cumulative[m] {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return d.Sizes[lo]
	}
	return d.Max
}

// Template is a JSON template, parsed: literal text and placeholders in order (v1alpha1
// PayloadSpec.Template).
type Template struct {
	Parts []TemplatePart
	// DeviceBytes, IndexDigits and CounterDigits bound what {device}, {index} and {counter}
	// render to (MaxLen); {timestamp} renders to TimestampDigits.
	DeviceBytes, IndexDigits, CounterDigits int
}

// TemplatePart is literal text (Field "") or a placeholder (Field one of the Field* names).
type TemplatePart struct {
	Text  string `json:",omitempty"`
	Field string `json:",omitempty"`
}

// The template's placeholders, as written between braces.
const (
	FieldDevice    = "device"
	FieldIndex     = "index"
	FieldCounter   = "counter"
	FieldTimestamp = "timestamp"
)

// TimestampDigits is how many digits {timestamp}, a time in Unix milliseconds, renders to
// (from 2001 to 2286).
const TimestampDigits = 13

// MaxRunIDBytes is the longest run id (the {run} of a client id) a template's {device} is sized
// for: the operator's is 8 characters, msgbench run's 6. A load generator given a longer one
// sizes its buffers from the client ids it has.
const MaxRunIDBytes = 16

// Bind is t with {device} and {index} filled in for one device: what its publisher renders
// from, with only {counter} and {timestamp} left per message.
func (t *Template) Bind(device string, index int) *Template {
	b := &Template{DeviceBytes: t.DeviceBytes, IndexDigits: t.IndexDigits, CounterDigits: t.CounterDigits}
	for _, p := range t.Parts {
		switch p.Field {
		case "":
			b.Parts = appendText(b.Parts, p.Text)
		case FieldDevice:
			b.Parts = appendText(b.Parts, device)
		case FieldIndex:
			b.Parts = appendText(b.Parts, strconv.Itoa(index))
		default:
			b.Parts = append(b.Parts, p)
		}
	}
	return b
}

// appendText appends literal text to parts, to the last part when it is literal too.
func appendText(parts []TemplatePart, s string) []TemplatePart {
	if s == "" {
		return parts
	}
	if n := len(parts); n > 0 && parts[n-1].Field == "" {
		parts[n-1].Text += s
		return parts
	}
	return append(parts, TemplatePart{Text: s})
}

// Append appends the message content t renders to for device (its client id), index (its
// place in the group), counter (the message's sequence number) and unixMilli (its intended send
// time) to b. It allocates nothing when b has room for MaxLen more bytes.
func (t *Template) Append(b []byte, device string, index int, counter uint32, unixMilli int64) []byte {
	for i := range t.Parts {
		p := &t.Parts[i]
		switch p.Field {
		case "":
			b = append(b, p.Text...)
		case FieldCounter:
			b = strconv.AppendUint(b, uint64(counter), 10)
		case FieldTimestamp:
			b = strconv.AppendInt(b, unixMilli, 10)
		case FieldDevice:
			b = append(b, device...)
		case FieldIndex:
			b = strconv.AppendInt(b, int64(index), 10)
		}
	}
	return b
}

// MaxLen is the most bytes t renders to (DeviceBytes, IndexDigits and CounterDigits bounding its
// placeholders).
func (t *Template) MaxLen() int {
	n := 0
	for _, p := range t.Parts {
		switch p.Field {
		case "":
			n += len(p.Text)
		case FieldDevice:
			n += t.DeviceBytes
		case FieldIndex:
			n += t.IndexDigits
		case FieldCounter:
			n += t.CounterDigits
		case FieldTimestamp:
			n += TimestampDigits
		}
	}
	return n
}

// compilePayload compiles device group dg's publish.payload (nil without one) for group g,
// whose client ids follow the pattern clientID. Errors name spec.groups[<name>].publish....
func compilePayload(dg *v1alpha1.DeviceGroupSpec, g *Group, clientID string) (*Payload, error) {
	pub := dg.Publish
	if pub == nil || pub.Payload == nil {
		return nil, nil
	}
	field := "spec.groups[" + dg.Name + "].publish"
	ps := pub.Payload
	switch {
	case pub.PayloadBytes != 256:
		return nil, fmt.Errorf("%s.payloadBytes: %d, and payload sets the messages' size (payload.size) or content (payload.template); leave payloadBytes out", field, pub.PayloadBytes)
	case ps.Size != nil && ps.Template != "":
		return nil, fmt.Errorf("%s.payload.template: a template's message is as long as it renders (the %d-byte header and the JSON), so it has no size distribution; set size (random content) or template, not both", field, HeaderBytes)
	case ps.Size == nil && ps.Template == "":
		return nil, fmt.Errorf("%s.payload.size: set size (a distribution of sizes, random content) or template (JSON content); without either, leave payload out and set publish.payloadBytes", field)
	}
	p := &Payload{}
	var what string
	if ps.Size != nil {
		d, err := compileSize(field+".payload.size", ps.Size)
		if err != nil {
			return nil, err
		}
		p.Size, p.MaxBytes, what = d, d.Max, field+".payload.size.max"
	} else {
		t, err := compileTemplate(field+".payload.template", ps.Template, dg, clientID)
		if err != nil {
			return nil, err
		}
		p.Template, p.MaxBytes, what = t, HeaderBytes+t.MaxLen(), field+".payload.template"
	}
	if p.MaxBytes > MaxPayloadBytes {
		return nil, fmt.Errorf("%s: its messages reach %d bytes; at most %d (16 MiB)", what, p.MaxBytes, MaxPayloadBytes)
	}
	if g.Protocol == v1alpha1.ProtocolMQTTSN && p.MaxBytes > MQTTSNMaxPayload {
		return nil, fmt.Errorf("%s: its messages reach %d bytes, and an MQTT-SN 1.2 PUBLISH over UDP carries at most %d", what, p.MaxBytes, MQTTSNMaxPayload)
	}
	return p, nil
}

// compileSize checks a size distribution (the CRD's rules too: a spec built in Go skips them)
// and resolves its parameters; field is its path.
func compileSize(field string, s *v1alpha1.SizeDistribution) (*SizeDistribution, error) {
	set := map[string]bool{"min": s.Min != nil, "max": s.Max != nil, "mean": s.Mean != nil, "stddev": s.StdDev != nil,
		"median": s.Median != nil, "p99": s.P99 != nil, "values": s.Values != nil}
	takes := map[string][]string{Uniform: {"min", "max"}, Normal: {"mean", "stddev"}, LogNormal: {"median", "p99"}, Weighted: {"values"}}
	optional := map[string][]string{Normal: {"min", "max"}, LogNormal: {"min", "max"}}
	need, ok := takes[s.Distribution]
	if !ok {
		return nil, fmt.Errorf("%s.distribution: %q; one of uniform, normal, lognormal, weighted", field, s.Distribution)
	}
	for _, f := range need {
		if !set[f] {
			return nil, fmt.Errorf("%s.%s: a %s distribution takes %s; set %s", field, f, s.Distribution, strings.Join(need, " and "), f)
		}
	}
	for _, f := range []string{"min", "max", "mean", "stddev", "median", "p99", "values"} {
		if set[f] && !contains(need, f) && !contains(optional[s.Distribution], f) {
			return nil, fmt.Errorf("%s.%s: a %s distribution takes %s, not %s; remove %s", field, f, s.Distribution, strings.Join(append(need, optional[s.Distribution]...), ", "), f, f)
		}
	}
	size := func(f string, v *int32, lo int) (int, error) {
		if v == nil {
			return 0, nil
		}
		if *v < int32(lo) || *v > MaxPayloadBytes {
			return 0, fmt.Errorf("%s.%s: %d; between %d and %d (16 MiB), the %d-byte header included", field, f, *v, lo, MaxPayloadBytes, HeaderBytes)
		}
		return int(*v), nil
	}
	var vals [6]int
	for i, f := range []struct {
		name string
		v    *int32
		lo   int
	}{{"min", s.Min, HeaderBytes}, {"max", s.Max, HeaderBytes}, {"mean", s.Mean, HeaderBytes}, {"stddev", s.StdDev, 1}, {"median", s.Median, HeaderBytes}, {"p99", s.P99, HeaderBytes + 1}} {
		var err error
		if vals[i], err = size(f.name, f.v, f.lo); err != nil {
			return nil, err
		}
	}
	lo, hi, mean, stddev, median, p99 := vals[0], vals[1], vals[2], vals[3], vals[4], vals[5]
	d := &SizeDistribution{Kind: s.Distribution}
	// A normal or log-normal distribution is truncated to [min, max], by default its 0.01st and
	// 99.99th percentiles (min at least the header).
	truncate := func(q0001, q9999 float64) {
		d.Min, d.Max = lo, hi
		if s.Min == nil {
			d.Min = max(HeaderBytes, int(math.Floor(q0001)))
		}
		if s.Max == nil {
			d.Max = int(min(MaxPayloadBytes, math.Ceil(q9999)))
		}
	}
	var mass float64 // the share of the distribution in [min, max], sizes rounded
	switch s.Distribution {
	case Uniform:
		d.Min, d.Max = lo, hi
		mass = 1
	case Normal:
		d.Mean, d.StdDev = float64(mean), float64(stddev)
		truncate(d.Mean-z9999*d.StdDev, d.Mean+z9999*d.StdDev)
		if d.Min <= d.Max {
			mass = phi((float64(d.Max)+0.5-d.Mean)/d.StdDev) - phi((float64(d.Min)-0.5-d.Mean)/d.StdDev)
		}
	case LogNormal:
		if p99 <= median {
			return nil, fmt.Errorf("%s.p99: %d; must be larger than median (%d): the spread is ln(p99/median)", field, p99, median)
		}
		d.Mu, d.Sigma = math.Log(float64(median)), math.Log(float64(p99)/float64(median))/z99
		truncate(math.Exp(d.Mu-z9999*d.Sigma), math.Exp(d.Mu+z9999*d.Sigma))
		if d.Min <= d.Max {
			mass = phi((math.Log(float64(d.Max)+0.5)-d.Mu)/d.Sigma) - phi((math.Log(float64(d.Min)-0.5)-d.Mu)/d.Sigma)
		}
	case Weighted:
		if len(s.Values) == 0 {
			return nil, fmt.Errorf("%s.values: a weighted distribution takes at least one {bytes, weight}", field)
		}
		var total uint64
		d.Min, d.Max = MaxPayloadBytes, 0
		for i, v := range s.Values {
			b, err := size("values["+strconv.Itoa(i)+"].bytes", &v.Bytes, HeaderBytes)
			if err != nil {
				return nil, err
			}
			if v.Weight < 1 {
				return nil, fmt.Errorf("%s.values[%d].weight: %d; at least 1", field, i, v.Weight)
			}
			total += uint64(v.Weight)
			d.Sizes, d.Cumulative = append(d.Sizes, b), append(d.Cumulative, total)
			d.Min, d.Max = min(d.Min, b), max(d.Max, b)
		}
		mass = 1
	}
	switch {
	case d.Min <= d.Max:
	case s.Min != nil && s.Max != nil:
		return nil, fmt.Errorf("%s.max: %d is smaller than min (%d)", field, d.Max, d.Min)
	case s.Min != nil:
		return nil, fmt.Errorf("%s.min: %d is above max's default, the distribution's 99.99th percentile (%d); lower min or set max", field, d.Min, d.Max)
	default:
		return nil, fmt.Errorf("%s.max: %d is below min's default, the distribution's 0.01st percentile (%d); raise max or set min", field, d.Max, d.Min)
	}
	if mass < minMass {
		center := fmt.Sprintf("mean %d, stddev %d", mean, stddev)
		if d.Kind == LogNormal {
			center = fmt.Sprintf("median %d, p99 %d", median, p99)
		}
		return nil, fmt.Errorf("%s: [min, max] = [%d, %d] holds %.3g%% of the %s distribution (%s), and a size drawn outside is drawn again: widen it to hold at least %g%%",
			field, d.Min, d.Max, 100*mass, d.Kind, center, 100*minMass)
	}
	return d, nil
}

// phi is the standard normal distribution's cumulative distribution function.
func phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// compileTemplate parses template into its parts, sizes its placeholders for device group dg
// (client ids following clientID) and checks that it is JSON once they are filled in.
func compileTemplate(field, template string, dg *v1alpha1.DeviceGroupSpec, clientID string) (*Template, error) {
	t := &Template{IndexDigits: digits(uint64(max(0, dg.Count-1))), CounterDigits: digits(math.MaxUint32)}
	if m := dg.Publish.Messages; m > 0 {
		// A device sends at most the group's messages, numbered from 0.
		t.CounterDigits = digits(uint64(min(m-1, math.MaxUint32)))
	}
	runID := strings.Repeat("r", MaxRunIDBytes)
	t.DeviceBytes = len(expandIdentity(clientID, int(max(0, dg.Count-1)), dg.Name, runID, ""))
	rest := template
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			t.Parts = appendText(t.Parts, rest)
			break
		}
		name, ok := placeholder(rest[i:])
		if !ok { // a brace of the JSON itself
			t.Parts = appendText(t.Parts, rest[:i+1])
			rest = rest[i+1:]
			continue
		}
		switch name {
		case FieldDevice, FieldIndex, FieldCounter, FieldTimestamp:
		default:
			return nil, fmt.Errorf("%s: {%s} is no placeholder; they are {device}, {index}, {counter} and {timestamp}", field, name)
		}
		t.Parts = appendText(t.Parts, rest[:i])
		t.Parts = append(t.Parts, TemplatePart{Field: name})
		rest = rest[i+len(name)+2:]
	}
	hasDevice := false
	for _, p := range t.Parts {
		hasDevice = hasDevice || p.Field == FieldDevice
	}
	if hasDevice {
		// {device} is sent as it is: a client id JSON would have to escape breaks the JSON.
		literal := strings.NewReplacer("{run}", "", "{group}", "", "{index}", "").Replace(clientID)
		if i := strings.IndexFunc(literal, func(r rune) bool { return r == '"' || r == '\\' || r < 0x20 }); i >= 0 {
			return nil, fmt.Errorf("%s: {device} is the device's client id, and the group's clientID (%q) has %q, which a JSON string must escape; msgbench renders the id as it is", field, clientID, literal[i])
		}
	}
	// JSON once filled in: the sample values are as the load generator renders them.
	sample := func(device string) []byte {
		return t.Append(nil, device, 0, 0, 1700000000000)
	}
	var v any
	if err := json.Unmarshal(sample("d-0"), &v); err != nil {
		msg := err.Error()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			msg = fmt.Sprintf("%s at byte %d", msg, se.Offset)
		}
		if hasDevice && json.Unmarshal(sample(`"d-0"`), &v) == nil {
			msg += `: {device} is text, write "{device}"`
		}
		return nil, fmt.Errorf("%s: not JSON once its placeholders are filled in (%s): %s", field, sample("d-0"), msg)
	}
	return t, nil
}

// placeholder reads the {name} s starts with; ok is false when s does not start with one (a
// brace of the JSON: {"…", {}).
func placeholder(s string) (name string, ok bool) {
	end := strings.IndexByte(s, '}')
	if end < 2 {
		return "", false
	}
	name = s[1:end]
	for i, r := range name {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return "", false
		}
	}
	return name, true
}

// digits is how many decimal digits n has.
func digits(n uint64) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}
