package fleetlimits

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

// Check refuses a run whose processes cannot fit on the machine: a process needing more open
// files than RLIMIT_NOFILE allows, more connections from one source address to one destination
// than there are ephemeral ports, more memory than is available. Each line names the limit, the
// number needed, the number allowed and how to fix it; all lines are joined.
func Check(in Input, m Machine) error {
	procs := Needs(in)
	var errs []error
	var over []Process // worker processes above the limit: one message for them all
	for _, p := range procs {
		switch {
		case p.Files <= m.NoFileSoft:
		case p.Role == Worker:
			over = append(over, p)
		default:
			errs = append(errs, filesError(in, m, p))
		}
	}
	if len(over) > 0 {
		p := over[0] // worker 0 has the largest share
		if len(over) > 1 {
			p.Name = fmt.Sprintf("%s (and %s more worker processes like it)", p.Name, num(len(over)-1))
		}
		errs = append(errs, filesError(in, m, p))
	}
	errs = append(errs, portsErrors(in, m, procs)...)
	if err := memoryError(in, m, procs); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func clients(spec *v1alpha1.MessagingBenchmarkSpec) int {
	return int(spec.Workload.Publishers) + int(spec.Workload.Subscribers)
}

// limitText names the open-files limit in force.
func limitText(m Machine) string {
	if m.NoFileSoft == m.NoFileHard {
		return "this machine's hard limit of " + num(m.NoFileHard) + " (RLIMIT_NOFILE)"
	}
	return "the limit of " + num(m.NoFileSoft) + " (RLIMIT_NOFILE; the hard limit is " + num(m.NoFileHard) + ")"
}

// raiseText says how to raise the hard limit to need.
func raiseText(need int) string {
	return fmt.Sprintf("raise the hard limit to %s or more: that needs root or CAP_SYS_RESOURCE (`sudo prlimit --nofile=%d:%d --pid $$` for this shell; "+
		"nofile in /etc/security/limits.conf for a login; LimitNOFILE= for a systemd service); msgbench raises its soft limit to the hard one itself", num(need), need, need)
}

func filesError(in Input, m Machine, p Process) error {
	spec := in.Spec
	n := clients(spec)
	if p.Role == Worker {
		n = p.Clients
	}
	var b strings.Builder
	fmt.Fprintf(&b, "spec.workload: %s clients need %s open files in %s%s, above %s. ", num(n), num(p.Files), p.Name, partsText(p), limitText(m))
	free := m.NoFileSoft - (p.Files - p.part("load generator"))
	switch {
	case p.Role == Broker:
		name := strings.TrimSuffix(strings.TrimPrefix(p.Name, "the broker process ("), ")")
		per := clientFiles(in.Plan)
		most := max(0, m.NoFileSoft-(p.Files-p.Connections))
		if per > 1 {
			fmt.Fprintf(&b, "%s holds one file per connection and each Kafka client has up to %d: at most %s clients with this limit. ", name, per, num(most/per))
		} else {
			fmt.Fprintf(&b, "%s holds one file per connection: at most %s connections with this limit, and one process cannot be split. ", name, num(most))
		}
		b.WriteString("Use fewer clients")
		if mode, _ := gatewayOf(in.Plan); mode == "mqtt-sn" && spec.MQTTSN.GatewayMode != v1alpha1.GatewayAggregating {
			b.WriteString(" (or --set mqttsn.gatewayMode=aggregating: all MQTT-SN clients share 4 broker connections)")
		}
		b.WriteString(", run it on Kubernetes, or ")
	case p.part("load generator") > 0 && free >= BaseFiles:
		if k, topics := splitInto(in, m); k > 0 {
			fmt.Fprintf(&b, "Split the clients into %d worker processes: --set workers.replicas=%d", k, k)
			if topics > 0 {
				fmt.Fprintf(&b, " --set workload.topics=%d (a topic's clients stay in one worker, so workers need at least as many topics)", topics)
			}
			b.WriteString("; or ")
		} else {
			b.WriteString("Use fewer clients, run it on Kubernetes, or ")
		}
	default: // what cannot move out of the msgbench process: gateway, embedded broker
		fmt.Fprintf(&b, "The in-process parts cannot be split into worker processes")
		if mode, _ := gatewayOf(in.Plan); mode == "mqtt-sn" && spec.MQTTSN.GatewayMode != v1alpha1.GatewayAggregating {
			b.WriteString(": --set mqttsn.gatewayMode=aggregating shares 4 broker connections between all MQTT-SN clients")
		}
		if in.EmbeddedBroker {
			b.WriteString(" (install Mosquitto to run the broker as a process of its own)")
		}
		b.WriteString(". Use fewer clients, run it on Kubernetes (gateway.replicas), or ")
	}
	b.WriteString(raiseText(p.Files))
	return errors.New(b.String())
}

// part is the files of the part named what.
func (p *Process) part(what string) int {
	for _, x := range p.Parts {
		if x.What == what {
			return x.Files
		}
	}
	return 0
}

func partsText(p Process) string {
	if len(p.Parts) < 2 || p.Role == Broker {
		return ""
	}
	s := make([]string, len(p.Parts))
	for i, x := range p.Parts {
		s[i] = x.What + " " + num(x.Files)
	}
	return " (" + strings.Join(s, ", ") + ")"
}

// maxShare is the most clients one of k workers gets: worker 0's, which deals topics 0, k, 2k, …
// and so has the most topics and, topic by topic, the most clients (plan.Group.Share gives the
// remainder of publishers and subscribers to the lowest topics).
func maxShare(w *v1alpha1.WorkloadSpec, k int) int { return clientsOf(w, 0, k) }

// maxSplit bounds the search for a number of workers.
const maxSplit = 100000

// splitInto is the fewest worker processes, more than today's, whose every load-generator
// process fits in the open-files limit, and the topics they need (0: spec.workload.topics
// will do); 0 workers when splitting cannot help (the run keeps its workers in-process, or a
// single client is too much).
func splitInto(in Input, m Machine) (k, topics int) {
	spec := in.Spec
	if in.WorkerProcesses == nil {
		return 0, 0
	}
	per := clientFiles(in.Plan)
	room := m.NoFileSoft - BaseFiles
	if room < per {
		return 0, 0
	}
	fits := func(k int, w *v1alpha1.WorkloadSpec) bool {
		s := *spec
		s.Workers.Replicas = int32(k)
		return in.WorkerProcesses(&s) && maxShare(w, k)*per <= room
	}
	from := 2
	if in.WorkerProcesses(spec) {
		from = workers(spec) + 1
	}
	n := clients(spec)
	for k := from; k <= min(n, maxSplit); k++ {
		if fits(k, &spec.Workload) {
			return k, 0
		}
		if k >= int(spec.Workload.Topics) { // more workers than topics: the extra ones idle
			break
		}
	}
	// Too few topics: with at least k topics the clients spread evenly.
	need := (n*per + room - 1) / room
	w := spec.Workload
	for k = max(from, need); k <= min(n, maxSplit); k++ {
		w.Topics = int32(max(int(spec.Workload.Topics), k))
		if fits(k, &w) {
			return k, int(w.Topics)
		}
	}
	return 0, 0
}

// portsErrors holds the connections to each destination from one source address against the
// ephemeral port range: connections to one host:port need a port each per source address.
// Clients that spread over 127.0.0.0/8 are bounded only by their own addresses' ports.
func portsErrors(in Input, m Machine, procs []Process) []error {
	defaults := map[string]int{}
	var order []string
	spreadCap := drivers.SourceAddresses * drivers.PerSourceAddress(m.PortRange)
	var errs []error
	workerSaid := false // one message for all worker processes (worker 0 has the most)
	for _, p := range procs {
		for _, d := range p.Dials {
			c := d.Conns
			if d.Spread {
				// Spreading clients take 127.0.0.1's ports only while some are free, then
				// their own addresses'.
				c = 0
				if d.Conns > spreadCap && (p.Role != Worker || !workerSaid) {
					workerSaid = workerSaid || p.Role == Worker
					errs = append(errs, fmt.Errorf("spec.workload: %s connections from %s to %s need more ephemeral ports than its %d source addresses offer (%s); split the clients into more workers (--set workers.replicas)",
						num(d.Conns), p.Name, d.To, drivers.SourceAddresses, num(spreadCap)))
				}
			}
			if _, ok := defaults[d.To]; !ok {
				order = append(order, d.To)
			}
			defaults[d.To] += c
		}
	}
	for _, to := range order {
		c := defaults[to]
		if c <= m.PortRange {
			continue
		}
		gw, _ := gatewayOf(in.Plan)
		var why string
		switch {
		case to == "the broker" && gw != "":
			why = "the in-process gateway reaches the broker from one address: use fewer clients"
			if gw == "mqtt-sn" {
				why += ", or --set mqttsn.gatewayMode=aggregating (4 broker connections for all clients)"
			}
		case in.Spec.Impaired():
			why = "the clients dial from the emulated link's device side, which has one address: use fewer clients, or run it on Kubernetes"
		default:
			why = "use fewer clients"
		}
		errs = append(errs, fmt.Errorf("spec.workload: %s connections to %s from one source address need as many ephemeral ports, above the %s of net.ipv4.ip_local_port_range; %s, "+
			"or widen the range (root: sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\")", num(c), to, num(m.PortRange), why))
	}
	return errs
}

func memoryError(in Input, m Machine, procs []Process) error {
	if m.MemAvailable <= 0 {
		return nil
	}
	total := memory(procs)
	if total <= m.MemAvailable {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "spec.workload: %s clients", num(clients(in.Spec)))
	if w := countWorkers(procs); w > 1 {
		fmt.Fprintf(&b, " in %s worker processes", num(w))
	}
	fmt.Fprintf(&b, " need about %s of memory (%s), above the %s available (MemAvailable, /proc/meminfo). "+
		"A process takes about %s before its connections, a load-generator client %s, a Mosquitto connection %s: ",
		size(total), processesText(procs, func(p Process) int64 { return p.Memory }, size), size(m.MemAvailable),
		size(BaseBytes), kb(LoadgenBytesPerClient), kb(MosquittoBytesPerConnection))
	idle := 0
	for _, p := range procs {
		if p.Role == Worker && p.Clients == 0 {
			idle++
		}
	}
	if idle > 0 {
		fmt.Fprintf(&b, "%s of the worker processes would have no client (a topic's clients stay in one worker; spec.workload.topics is %s); ",
			num(idle), num(int(in.Spec.Workload.Topics)))
	}
	if k := fewerWorkers(in, m); k > 0 {
		if busy := countWorkers(procs) - idle; idle > 0 && busy < k {
			k = max(busy, 1)
		}
		fmt.Fprintf(&b, "use fewer worker processes (--set workers.replicas=%d), fewer clients, ", k)
	} else {
		b.WriteString("use fewer clients, ")
	}
	b.WriteString("or run it on Kubernetes, where workers spread over nodes")
	return errors.New(b.String())
}

// memory is the processes' memory together.
func memory(procs []Process) int64 {
	var total int64
	for _, p := range procs {
		total += p.Memory
	}
	return total
}

func countWorkers(procs []Process) int {
	n := 0
	for _, p := range procs {
		if p.Role == Worker {
			n++
		}
	}
	return n
}

// fewerWorkers is the most worker processes, fewer than the spec's, whose run fits in the
// memory available (0: none does, or the spec has no worker processes). Memory grows with the
// workers, so a binary search finds it.
func fewerWorkers(in Input, m Machine) int {
	n := workers(in.Spec)
	if n < 2 || in.WorkerProcesses == nil || !in.WorkerProcesses(in.Spec) {
		return 0
	}
	fits := func(k int) bool {
		s := *in.Spec
		s.Workers.Replicas = int32(k)
		in := in
		in.Spec = &s
		return memory(Needs(in)) <= m.MemAvailable
	}
	if !fits(1) {
		return 0
	}
	lo, hi := 1, n-1 // fits(lo); the answer is in [lo, hi]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// processesText lists what each process needs (of), the worker processes summed up in one
// item ("1,000 worker processes × 33.6 MB each = 33.6 GB"), so that it stays short however many.
func processesText[T int | int64](procs []Process, of func(Process) T, format func(T) string) string {
	var items []string
	var workers []Process
	for _, p := range procs {
		if p.Role == Worker {
			if len(workers) == 0 {
				items = append(items, "") // the workers' place
			}
			workers = append(workers, p)
			continue
		}
		items = append(items, p.Name+" "+format(of(p)))
	}
	if len(workers) > 0 {
		var sum, lo, hi T
		for i, w := range workers {
			v := of(w)
			sum += v
			if i == 0 || v < lo {
				lo = v
			}
			if i == 0 || v > hi {
				hi = v
			}
		}
		var s string
		switch {
		case len(workers) == 1:
			s = workers[0].Name + " " + format(sum)
		case format(lo) == format(hi):
			s = fmt.Sprintf("%s worker processes × %s each = %s", num(len(workers)), format(hi), format(sum))
		default:
			s = fmt.Sprintf("%s worker processes × %s–%s each = %s", num(len(workers)), format(lo), format(hi), format(sum))
		}
		for i := range items {
			if items[i] == "" {
				items[i] = s
			}
		}
	}
	return strings.Join(items, ", ")
}

// num writes n with thousands separators: 20,130.
func num(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func gb(b int64) string { return strconv.FormatFloat(float64(b)/1e9, 'f', 1, 64) + " GB" }

// size writes b in GB, or in MB below 1 GB (not "0.0 GB").
func size(b int64) string {
	if b < 1e9 {
		return strconv.FormatFloat(float64(b)/1e6, 'f', 1, 64) + " MB"
	}
	tenths := (b + 5e7) / 1e8
	return num(int(tenths/10)) + "." + strconv.FormatInt(tenths%10, 10) + " GB"
}

func kb(b int64) string { return strconv.FormatInt(b>>10, 10) + " KiB" }

// Summary is one line of what the run's processes need against the limits, for the run's log.
func Summary(in Input, m Machine) string {
	procs := Needs(in)
	files := processesText(procs, func(p Process) int { return p.Files }, num)
	return fmt.Sprintf("open files: %s, of %s (RLIMIT_NOFILE); memory about %s of %s available", files, num(m.NoFileSoft), gb(memory(procs)), gb(m.MemAvailable))
}
