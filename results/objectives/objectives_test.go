package objectives

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/results"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		expr   string
		figure string
		op     Op
		value  float64 // in the figure's unit
		str    string  // String()
	}{
		// every operator
		{"latency.endToEnd.p99 <= 50ms", "latency.endToEnd.p99", LE, 50_000, "latency.endToEnd.p99 <= 50ms"},
		{"throughput.receivedPerSecond >= 1000", "throughput.receivedPerSecond", GE, 1000, "throughput.receivedPerSecond >= 1000"},
		{"lost == 0", "lost", EQ, 0, "lost == 0"},
		{"errors != 3", "errors", NE, 3, "errors != 3"},
		{"latency.connect.p95 < 1s", "latency.connect.p95", LT, 1e6, "latency.connect.p95 < 1s"},
		{"sent > 10", "sent", GT, 10, "sent > 10"},
		// spacing as the CRD pattern allows it
		{"  lost==0  ", "lost", EQ, 0, "lost == 0"},
		{"lost<=5", "lost", LE, 5, "lost <= 5"},
		// durations: every Go unit, fractions, compound
		{"latency.endToEnd.p50 <= 1.5s", "latency.endToEnd.p50", LE, 1.5e6, ""},
		{"latency.endToEnd.p50 <= 200us", "latency.endToEnd.p50", LE, 200, ""},
		{"latency.endToEnd.p50 <= 200µs", "latency.endToEnd.p50", LE, 200, ""},
		{"latency.endToEnd.p50 <= 200μs", "latency.endToEnd.p50", LE, 200, ""}, // Greek mu
		{"latency.endToEnd.p50 <= 1500ns", "latency.endToEnd.p50", LE, 1.5, ""},
		{"latency.endToEnd.max <= 2m", "latency.endToEnd.max", LE, 120e6, ""},
		{"latency.firstMessage.max <= 1h", "latency.firstMessage.max", LE, 3600e6, ""},
		{"latency.firstMessage.p99 <= 1m30s", "latency.firstMessage.p99", LE, 90e6, ""},
		{"latency.publishAck.mean < .5ms", "latency.publishAck.mean", LT, 500, ""},
		// counts and rates: SI suffixes, /s
		{"sent >= 1k", "sent", GE, 1000, ""},
		{"sent >= 1K", "sent", GE, 1000, ""},
		{"sent >= 2.5M", "sent", GE, 2.5e6, ""},
		{"sent >= 1G", "sent", GE, 1e9, ""},
		{"sent >= 1e3", "sent", GE, 1000, ""},
		{"throughput.sentPerSecond >= 1.5k/s", "throughput.sentPerSecond", GE, 1500, ""},
		{"throughput.sentPerSecond >= 800/s", "throughput.sentPerSecond", GE, 800, ""},
		// bytes and byte rates: SI and IEC, optional B and /s
		{"wire.bytesPerMessage <= 300", "wire.bytesPerMessage", LE, 300, ""},
		{"wire.bytesPerMessage <= 300B", "wire.bytesPerMessage", LE, 300, ""},
		{"resources.loadgenMaxRSSBytes <= 64Ki", "resources.loadgenMaxRSSBytes", LE, 65536, ""},
		{"resources.loadgenMaxRSSBytes <= 512MiB", "resources.loadgenMaxRSSBytes", LE, 512 << 20, ""},
		{"resources.loadgenMaxRSSBytes <= 1GB", "resources.loadgenMaxRSSBytes", LE, 1e9, ""},
		{"throughput.receivedBytesPerSecond >= 1MB/s", "throughput.receivedBytesPerSecond", GE, 1e6, ""},
		{"throughput.receivedBytesPerSecond >= 1MiB/s", "throughput.receivedBytesPerSecond", GE, 1 << 20, ""},
		{"throughput.receivedBytesPerSecond >= 500k", "throughput.receivedBytesPerSecond", GE, 500e3, ""},
		// seconds: a number of seconds or a duration
		{"resources.loadgenCPUSeconds <= 2.5", "resources.loadgenCPUSeconds", LE, 2.5, ""},
		{"resources.loadgenCPUSeconds <= 1500ms", "resources.loadgenCPUSeconds", LE, 1.5, ""},
		{"measuredSeconds >= 1m", "measuredSeconds", GE, 60, ""},
		{"measuredSeconds >= 1m30s", "measuredSeconds", GE, 90, ""},
		// percentages
		{"lostPercent <= 1%", "lostPercent", LE, 1, ""},
		{"lostPercent <= 0.5", "lostPercent", LE, 0.5, ""},
		// signs
		{"latency.publishDelay.min >= -1ms", "latency.publishDelay.min", GE, -1000, ""},
	} {
		o, err := Parse(c.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.expr, err)
			continue
		}
		if o.Figure.Name != c.figure || o.Op != c.op || o.Value != c.value {
			t.Errorf("Parse(%q) = %s %s %v, want %s %s %v", c.expr, o.Figure.Name, o.Op, o.Value, c.figure, c.op, c.value)
		}
		if c.str != "" && o.String() != c.str {
			t.Errorf("Parse(%q).String() = %q, want %q", c.expr, o.String(), c.str)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"latency.endToEnd.p99 <= 50", `objective "latency.endToEnd.p99 <= 50": a latency needs a unit, e.g. 50ms`},
		{"latency.endToEnd.p99 <= 50xs", `objective "latency.endToEnd.p99 <= 50xs": 50xs is not a duration; write a duration such as 50ms, 1.5s or 200us`},
		{"latency.endToEnd.p99 <= fast", `fast is not a duration`},
		{"latency.e2e.p99 <= 50ms", `objective "latency.e2e.p99 <= 50ms": unknown figure latency.e2e.p99; latency figures are latency.<histogram>.<statistic>, e.g. latency.endToEnd.p99`},
		{"receivd >= 10", `unknown figure receivd (did you mean received?)`},
		{"lost", `objective "lost": not of the form <figure> <op> <value> (op one of <= >= == != < >), e.g. latency.endToEnd.p99 <= 50ms`},
		{"lost = 0", `not of the form`},
		{"lost =< 0", `not of the form`},
		{"lost <= 0 1", `not of the form`},
		{"", `not of the form`},
		{"lost ===0", `=0 is not a number; lost is a count`},
		{"lost <= 1%", `objective "lost <= 1%": 1%: lost is a count: write a number such as 0, 1000 or 1k (for a share, lostPercent <= 1%)`},
		{"sent >= 1x", `1x: sent is a count`},
		{"sent >= 1KiB", `1KiB: sent is a count`}, // IEC only for bytes
		{"sent >= NaN", `NaN is not a number`},
		{"sent >= Inf", `Inf is not a number`},
		{"sent >= 1e999", `1e999 is not a number`},
		{"throughput.sentPerSecond >= 1k/min", `1k/min: throughput.sentPerSecond is messages per second`},
		{"throughput.receivedBytesPerSecond >= 1Mbit", `throughput.receivedBytesPerSecond is bytes per second`},
		{"wire.bytesPerMessage <= 3 bytes", `not of the form`},
		{"wire.bytesPerMessage <= 3kb", `3kb: wire.bytesPerMessage is bytes`},
		{"resources.loadgenCPUSeconds <= lots", `lots is not a duration; resources.loadgenCPUSeconds is in seconds`},
		{"lostPercent <= 1k", `1k: lostPercent is a percentage`},
	} {
		_, err := Parse(c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want it to say %q", c.expr, err, c.want)
		}
	}
}

func TestParseAll(t *testing.T) {
	objs, err := ParseAll([]string{"lost == 0", "latency.endToEnd.p99 <= 50", "sent >= 1k", "bogus > 1"})
	if len(objs) != 2 || objs[0].Figure.Name != "lost" || objs[1].Figure.Name != "sent" {
		t.Errorf("ParseAll kept %v", objs)
	}
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `spec.objectives[1]: objective "latency.endToEnd.p99 <= 50": a latency needs a unit`) ||
		!strings.HasPrefix(lines[1], `spec.objectives[3]: objective "bogus > 1": unknown figure bogus`) {
		t.Errorf("ParseAll error:\n%v", err)
	}
	if objs, err := ParseAll(nil); err != nil || len(objs) != 0 {
		t.Errorf("ParseAll(nil) = %v, %v", objs, err)
	}
}

func mustParse(t *testing.T, exprs ...string) []Objective {
	t.Helper()
	objs, err := ParseAll(exprs)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestJudge(t *testing.T) {
	values := map[string]float64{"latency.endToEnd.p99": 62_300, "lost": 0, "sent": 1000, "throughput.receivedPerSecond": 812.44,
		"latency.connect.p50": 1_234_567, "measuredSeconds": 59.5, "lostPercent": 0.123456, "wire.bytesPerMessage": 120}
	value := func(name string) (float64, bool) { v, ok := values[name]; return v, ok }
	for _, c := range []struct {
		expr    string
		met     bool
		missing bool
		line    string // Outcome.String()
	}{
		{"latency.endToEnd.p99 <= 50ms", false, false, "latency.endToEnd.p99 <= 50ms: measured 62.3ms"},
		{"latency.endToEnd.p99 <= 62300us", true, false, "latency.endToEnd.p99 <= 62300us: met (measured 62300us)"},
		{"latency.endToEnd.p99 < 62300us", false, false, "latency.endToEnd.p99 < 62300us: measured 62300us"},
		{"latency.endToEnd.p99 <= 0.1s", true, false, "latency.endToEnd.p99 <= 0.1s: met (measured 0.0623s)"},
		{"latency.endToEnd.p99 >= 1m", false, false, "latency.endToEnd.p99 >= 1m: measured 0.001038m"},
		{"latency.connect.p50 <= 1m30s", true, false, "latency.connect.p50 <= 1m30s: met (measured 1.234567s)"},
		{"lost == 0", true, false, "lost == 0: met (measured 0)"},
		{"lost != 0", false, false, "lost != 0: measured 0"},
		{"lost > 0", false, false, "lost > 0: measured 0"},
		{"sent >= 1k", true, false, "sent >= 1k: met (measured 1k)"},
		{"sent > 1k", false, false, "sent > 1k: measured 1k"},
		{"throughput.receivedPerSecond >= 1000", false, false, "throughput.receivedPerSecond >= 1000: measured 812.4"},
		{"throughput.receivedPerSecond >= 1k/s", false, false, "throughput.receivedPerSecond >= 1k/s: measured 0.8124k/s"},
		{"measuredSeconds >= 60", false, false, "measuredSeconds >= 60: measured 59.5"},
		{"lostPercent <= 0.1%", false, false, "lostPercent <= 0.1%: measured 0.1235%"},
		{"wire.bytesPerMessage <= 1KiB", true, false, "wire.bytesPerMessage <= 1KiB: met (measured 0.1172KiB)"},
		{"latency.publishAck.p99 <= 10ms", false, true, "latency.publishAck.p99 <= 10ms: not measured (absent when nothing was acknowledged (QoS 0))"},
		{"resources.loadgenCPUSeconds <= 1", false, true, "resources.loadgenCPUSeconds <= 1: not measured"},
	} {
		outs := Judge(mustParse(t, c.expr), value)
		if len(outs) != 1 {
			t.Fatalf("%s: %d outcomes", c.expr, len(outs))
		}
		o := outs[0]
		if o.Met != c.met || o.Missing != c.missing || o.String() != c.line {
			t.Errorf("%s: met %v missing %v %q, want %v %v %q", c.expr, o.Met, o.Missing, o.String(), c.met, c.missing, c.line)
		}
		if Met(outs) != c.met {
			t.Errorf("%s: Met = %v", c.expr, Met(outs))
		}
	}
}

func TestSummaryAndMet(t *testing.T) {
	value := func(name string) (float64, bool) {
		return map[string]float64{"latency.endToEnd.p99": 62_300, "lost": 0}[name], name != "duplicates"
	}
	outs := Judge(mustParse(t, "lost == 0", "latency.endToEnd.p99 <= 50ms", "duplicates == 0"), value)
	if Met(outs) {
		t.Error("Met with two objectives missed")
	}
	want := "latency.endToEnd.p99 <= 50ms: measured 62.3ms\nduplicates == 0: not measured (absent when the run has no subscribers, or payloads are under 16 bytes)"
	if s := Summary(outs); s != want {
		t.Errorf("Summary =\n%s\nwant\n%s", s, want)
	}
	outs = Judge(mustParse(t, "lost == 0"), value)
	if !Met(outs) || Summary(outs) != "" {
		t.Errorf("all met: Met %v Summary %q", Met(outs), Summary(outs))
	}
	if !Met(nil) || Summary(nil) != "" {
		t.Error("no objectives are met")
	}
}

func TestForResult(t *testing.T) {
	r := &results.Result{Name: "x", Phase: "Succeeded", MeasuredSeconds: 10, Sent: 1000, Received: 990, Lost: results.Int64(10),
		Throughput: results.Throughput{ReceivedPerSecond: 99},
		Latency:    results.Latencies{EndToEnd: &results.LatencySummary{Count: 990, P99Micros: 62_300}}}
	outs := Judge(mustParse(t, "latency.endToEnd.p99 <= 50ms", "lost <= 10", "throughput.receivedPerSecond >= 100", "latency.connect.p99 <= 1s"), ForResult(r))
	want := "latency.endToEnd.p99 <= 50ms: measured 62.3ms\nthroughput.receivedPerSecond >= 100: measured 99\n" +
		"latency.connect.p99 <= 1s: not measured (absent when no client connected)"
	if s := Summary(outs); s != want {
		t.Errorf("Summary =\n%s\nwant\n%s", s, want)
	}
	if _, ok := ForResult(r)("no.such.figure"); ok {
		t.Error("an unknown figure has a value")
	}
}
