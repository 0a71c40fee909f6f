package report

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/energy"
	"github.com/msgbench/msgbench/results"
)

// nbiotEnergy is 8 NB-IoT devices' energy over a 60 s window, every state's energy its seconds
// (summed over the devices: 480 s) × the nb-iot model's power, as results.NewEnergy adds them up:
// 23431.73 mJ, 292.9 mJ for each of 80 messages, 13.56 mA per device, 15.36 days on 5000 mAh.
// perMessage scales the energy (and the current) to tell points apart. It goes through JSON, as
// a report reads it from result.json.
func nbiotEnergy(t *testing.T, scale float64) *results.Energy {
	t.Helper()
	m, ok := energy.Lookup("nb-iot")
	if !ok {
		t.Fatal("no nb-iot model")
	}
	seconds := map[string]float64{"transmit": 0.4, "receive": 0.2, "connected": 120, "promotion": 8, "idle": 80, "paging": 0, "psm": 271.4}
	battery := int32(5000)
	e := &results.Energy{Model: "nb-iot", Devices: 8, Seconds: 60, Messages: 80, Promotions: 40, BatteryMilliampHours: &battery,
		Parameters: map[string]any{"source": m.Source, "voltage": m.VoltageV, "inactivityTimer": "20s", "promotionDelay": "200ms",
			"pagingCycle": "2.56s", "psmAfter": "10s", "milliwatts": map[string]float64{"transmit": m.TxMW}}}
	for i, name := range energy.StateNames() {
		st := results.EnergyState{State: name, Seconds: seconds[name], MilliwattsSet: m.Power(energy.State(i))}
		st.Millijoules = st.Seconds * st.MilliwattsSet * scale
		st.TimePercent = 100 * st.Seconds / 480
		e.Millijoules += st.Millijoules
		e.States = append(e.States, st)
	}
	for i := range e.States {
		e.States[i].SharePercent = 100 * e.States[i].Millijoules / e.Millijoules
	}
	e.PerMessageMillijoules = results.Float64(e.Millijoules / e.Messages)
	e.MeanMilliamps = e.Millijoules / 480 / m.VoltageV
	e.DeviceMilliampsP50, e.DeviceMilliampsP99 = 13.2*scale, 16.9*scale
	e.BatteryDays = results.Float64(float64(battery) / e.MeanMilliamps / 24)
	e.BatteryDaysP99 = results.Float64(float64(battery) / e.DeviceMilliampsP99 / 24)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var out results.Energy
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// energyStateRows are nbiotEnergy's states as the table writes them: time, time %, mJ, energy %
// and the model's power (mW).
var energyStateRows = []string{
	`<tr><td class="l">transmit</td><td>0.4</td><td>0.08333 %</td><td>237.6</td><td>1.014 %</td><td>594</td></tr>`,
	`<tr><td class="l">receive</td><td>0.2</td><td>0.04167 %</td><td>36</td><td>0.1536 %</td><td>180</td></tr>`,
	`<tr><td class="l">connected</td><td>120</td><td>25 %</td><td>21600</td><td>92.18 %</td><td>180</td></tr>`,
	`<tr><td class="l">promotion</td><td>8</td><td>1.667 %</td><td>1440</td><td>6.146 %</td><td>180</td></tr>`,
	`<tr><td class="l">idle</td><td>80</td><td>16.67 %</td><td>115.2</td><td>0.4916 %</td><td>1.44</td></tr>`,
	`<tr><td class="l">paging</td><td>0</td><td>0 %</td><td>0</td><td>0 %</td><td>1.44</td></tr>`,
	`<tr><td class="l">psm</td><td>271.4</td><td>56.54 %</td><td>2.931</td><td>0.01251 %</td><td>0.0108</td></tr>`,
}

func runPage(t *testing.T, r *results.Result) string {
	t.Helper()
	var b strings.Builder
	if err := WriteHTML(&b, FromResults([]*results.Result{r}), nil); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	if strings.Contains(page, "%!") || strings.Contains(page, "<no value>") {
		t.Error("the page has a formatting error")
	}
	return page
}

// TestReportOfEnergy: a run with a radio power model has an Energy section — the model and its
// source, the radio's timers, the devices, energy per message, the mean current and its spread,
// the battery's life — with a row per radio state, the energy figures in its points table, and
// a figure of where the energy went, a bar per state it was spent in.
func TestReportOfEnergy(t *testing.T) {
	m, _ := energy.Lookup("nb-iot")
	r := measured(8, 512, 2000, 3000, 120)
	r.Name = "nb-iot-energy"
	r.Energy = nbiotEnergy(t, 1)
	page := runPage(t, r)
	for _, want := range append([]string{
		`<h2 id="energy">Energy</h2>`,
		"<dt>model</dt><dd>nb-iot</dd>",
		"<dt>source</dt><dd>" + m.Source + "</dd>",
		"<dt>radio</dt><dd>inactivity tail 20s, promotion 200ms, paging cycle 2.56s, PSM after 10s; 3.6 V</dd>",
		"<dt>devices</dt><dd>8 radios (one per client connection), each accounted over 60 s; 40 promotions (connection set-ups)</dd>",
		"<dt>per message</dt><dd>292.9 mJ (23430 mJ in all over 80 messages delivered)</dd>",
		"<dt>mean current</dt><dd>13.56 mA per device (mean over the devices); p50 13.2 mA, p99 16.9 mA</dd>",
		"<dt>battery</dt><dd>15.36 days on 5000 mAh at the mean current; 12.33 days at the p99 device's</dd>",
		`<table id="energy-states">`,
		"<th>energy/msg</th><th>mean current</th><th>battery</th></tr>",
		"<td>292.9 mJ</td><td>13.56 mA</td><td>15.36 days</td></tr>",
		`<figure id="energy-states">`,
	}, energyStateRows...) {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %s", want)
		}
	}

	figs, err := RunFigures(r)
	if err != nil {
		t.Fatal(err)
	}
	f := figs[len(figs)-1]
	if f.ID != "energy-states" || !f.Bars || len(f.Series) != 1 {
		t.Fatalf("last figure %s (bars %v, %d series), want energy-states: bars of one series", f.ID, f.Bars, len(f.Series))
	}
	// Paging took neither time nor energy: no bar.
	if got := strings.Join(f.Categories, " "); got != "transmit receive connected promotion idle psm" {
		t.Errorf("states %s", got)
	}
	if v := f.Series[0].Values[2]; v.X != 2 || roundSig(v.Y, 4) != 92.18 {
		t.Errorf("connected %+v, want 92.18 %% of the energy", v)
	}
	if csv := string(f.CSV()); !strings.Contains(csv, "series,category,share of the radio energy (%),ci95,runs\n") || !strings.Contains(csv, "all devices,connected,92.18") {
		t.Errorf("CSV:\n%s", csv)
	}
	if _, err := f.Render("svg"); err != nil {
		t.Fatal(err)
	}
}

// TestReportOfGroupsEnergy: a group behind a link of its own with a power model has its own
// energy under the Energy section, and its bars in the figure beside the run's.
func TestReportOfGroupsEnergy(t *testing.T) {
	r := measured(8, 512, 2000, 3000, 120)
	r.Energy = nbiotEnergy(t, 1)
	r.Groups = []results.GroupResult{{Name: "sensors", Protocol: "MQTT 3.1.1", QoS: 1, Publishers: 8, Sent: 80, Energy: nbiotEnergy(t, 2)},
		{Name: "backend", Protocol: "MQTT 3.1.1", QoS: 1, Subscribers: 1, Received: 80, Expected: 80}}
	page := runPage(t, r)
	for _, want := range []string{`<table id="energy-states">`, "<h3>group sensors</h3>", `<table id="energy-states-sensors">`,
		"<dt>per message</dt><dd>585.8 mJ (46860 mJ in all over 80 messages delivered)</dd>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %s", want)
		}
	}
	if strings.Contains(page, "group backend</h3>") {
		t.Error("a group without energy has an energy section")
	}
	f := energyFigure(r)
	if len(f.Series) != 2 || f.Series[0].Label != "all devices" || f.Series[1].Label != "group sensors" || f.Series[0].Colour == f.Series[1].Colour {
		t.Errorf("series %+v, want the run's and the sensors' in two colours", f.Series)
	}
}

// TestReportWithoutEnergy: a run without a power model has no Energy section, no energy figure
// and no energy columns.
func TestReportWithoutEnergy(t *testing.T) {
	r := measured(8, 512, 2000, 3000, 120)
	page := runPage(t, r)
	for _, unwanted := range []string{"Energy</h2>", "energy-states", "energy/msg"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("a run without energy has %s", unwanted)
		}
	}
	figs, err := RunFigures(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if strings.HasPrefix(f.ID, "energy") {
			t.Errorf("a run without energy has figure %s", f.ID)
		}
	}
}

// TestSuiteEnergyFigures: a suite whose runs measured their devices' energy — DICOMO 2017's
// MQTT-SN, MQTT and HTTP per QoS, on NB-IoT — plots energy per message (in mJ) and battery life
// by its axes, one value per point with its CI over the repetitions, each with its CSV; a suite
// without energy plots neither.
func TestSuiteEnergyFigures(t *testing.T) {
	cost := map[string]float64{"mqtt-sn": 1, "mqtt": 1.5, "http": 3}
	protocols := axis{[]string{"protocol"}, []string{"mqtt-sn", "mqtt", "http"}}
	qos := axis{[]string{"qos"}, []string{"0", "1", "2"}}
	doc := synthetic([]axis{protocols, qos}, 2, func(v map[string]string, rep int) *results.Result {
		r := measured(8, 512, 2000, 3000, 120)
		r.Energy = nbiotEnergy(t, cost[v["protocol"]]*(1+atoi(v["qos"])/2)*(1+float64(rep-1)/100))
		return r
	})
	d := FromSuite(doc)
	specs := Plan(d)
	var per, days *FigureSpec
	for i := range specs {
		switch specs[i].Y {
		case "energy.perMessage":
			per = &specs[i]
		case "energy.batteryDays":
			days = &specs[i]
		}
	}
	if per == nil || days == nil {
		t.Fatalf("planned %v: no energy per message or battery life", specs)
	}
	if per.ID != "energy-perMessage-by-protocol" || per.Colour.Field() != "protocol" || per.Dash.Field() != "qos" {
		t.Errorf("energy per message %s (colour %v, dash %v), want bars by protocol, a bar per QoS", per.ID, per.Colour.Fields, per.Dash.Fields)
	}
	f, err := Build(d, *per)
	if err != nil {
		t.Fatal(err)
	}
	if f.YLabel != "radio energy per message (mJ)" || f.Title != "Radio energy per message by protocol" {
		t.Errorf("y label %q, title %q", f.YLabel, f.Title)
	}
	values := 0
	for _, s := range f.Series {
		values += len(s.Values)
		for _, v := range s.Values {
			if v.N != 2 || v.CI95 <= 0 {
				t.Errorf("%s %+v: want the mean of 2 repetitions with its CI", s.Label, v)
			}
		}
	}
	if values != 9 {
		t.Errorf("%d values, want one per point (9)", values)
	}
	// MQTT-SN at QoS 0: 292.9 mJ and 1 % more, so 294.4 mJ on average.
	if s := f.Series[0]; s.Label != "QoS 0" || roundSig(s.Values[0].Y, 4) != 294.4 || f.Categories[0] != "mqtt-sn" {
		t.Errorf("first series %s %+v, categories %v: want QoS 0 with mqtt-sn at 294.4 mJ", s.Label, s.Values, f.Categories)
	}

	dir := t.TempDir()
	if _, err := WriteFiles(dir, d, Options{}); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "energy-perMessage-by-protocol.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// In mJ, a row per point: series (QoS), category (protocol), mean, CI, runs.
	if !strings.HasPrefix(string(csv), "series,category,radio energy per message (mJ),ci95,runs\nQoS 0,mqtt-sn,294.36112,18.608023,2\n") {
		t.Errorf("energy per message CSV:\n%s", csv)
	}
	if strings.Count(string(csv), "\n") != 10 {
		t.Errorf("energy per message CSV has %d lines, want a header and 9 values:\n%s", strings.Count(string(csv), "\n"), csv)
	}
	if _, err := os.Stat(filepath.Join(dir, "energy-batteryDays-by-protocol.csv")); err != nil {
		t.Error(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if page := string(data); !strings.Contains(page, `<figure id="energy-perMessage-by-protocol">`) || !strings.Contains(page, "<th>energy/msg</th>") {
		t.Error("the suite's page lacks the energy per message figure or column")
	}

	// Against clients, as DICOMO drew messages handled: a line per protocol and QoS.
	clients := axis{[]string{"workload.publishers", "workload.subscribers"}, []string{"1", "4", "16"}}
	d = FromSuite(synthetic([]axis{protocols, qos, clients}, 1, func(v map[string]string, rep int) *results.Result {
		r := measured(8, 512, 2000, 3000, 120)
		r.Energy = nbiotEnergy(t, cost[v["protocol"]]/atoi(v["workload.publishers"]))
		return r
	}))
	found := false
	for _, s := range Plan(d) {
		found = found || s.ID == "energy-perMessage-by-clients"
	}
	if !found {
		t.Error("no energy per message by clients")
	}

	// Without energy, neither figure.
	for _, s := range Plan(FromSuite(synthetic([]axis{protocols, qos}, 1, func(v map[string]string, rep int) *results.Result {
		return measured(8, 512, 2000, 3000, 120)
	}))) {
		if strings.HasPrefix(s.Y, "energy.") {
			t.Errorf("a suite without energy plots %s", s.Y)
		}
	}
}

// TestSuiteGroupEnergyFigures: when the energy is a device group's (sensors behind a link of
// their own), the suite's statistics hold groups.<g>.energy.* and the report plots them like
// the run's, labelled with the group.
func TestSuiteGroupEnergyFigures(t *testing.T) {
	protocols := axis{[]string{"groups[sensors].protocol"}, []string{"mqtt-sn", "mqtt"}}
	cost := map[string]float64{"mqtt-sn": 1, "mqtt": 1.5}
	doc := synthetic([]axis{protocols}, 2, func(v map[string]string, rep int) *results.Result {
		r := measured(8, 512, 2000, 3000, 120)
		r.Groups = []results.GroupResult{{Name: "sensors", Energy: nbiotEnergy(t, cost[v["groups[sensors].protocol"]])}}
		return r
	})
	d := FromSuite(doc)
	var per *FigureSpec
	for _, s := range Plan(d) {
		if s.Y == "energy.perMessage" {
			t.Errorf("planned the run's energy per message, which no run has")
		}
		if s.Y == "groups.sensors.energy.perMessage" {
			per = &s
		}
	}
	if per == nil {
		t.Fatalf("planned %v: no groups.sensors.energy.perMessage", Plan(d))
	}
	f, err := Build(d, *per)
	if err != nil {
		t.Fatal(err)
	}
	if f.YLabel != "sensors: radio energy per message (mJ)" {
		t.Errorf("y label %q", f.YLabel)
	}
	var n int
	for _, s := range f.Series {
		for _, v := range s.Values {
			n++
			if v.N != 2 {
				t.Errorf("%s %+v: want the mean of 2 repetitions", s.Label, v)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d values, want one per protocol", n)
	}
}
