package proc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// usageJSON is Usage on the wire (`msgbench usage`'s /usage).
type usageJSON struct {
	CPUSeconds float64 `json:"cpuSeconds"`
	// CPUResolutionSeconds is Usage.CPUResolution; absent from a sidecar older than it, which
	// read 10 ms clock ticks.
	CPUResolutionSeconds *float64 `json:"cpuResolutionSeconds,omitempty"`
	PeakRSSBytes         int64    `json:"peakRSSBytes"`
	RSSBytes             int64    `json:"rssBytes"`
}

// cgroupRoot is where cgroup v2 is mounted (a variable for tests).
var cgroupRoot = "/sys/fs/cgroup"

// Others sums the usage of every process this one can see but itself: in a pod that shares its
// process namespace, the other containers' (the broker's). CPU is counted per cgroup v2 where
// this process can read the other process's cgroup (cpu.stat usage_usec, µs: every process of
// that container, exited ones included), once per cgroup, and otherwise per process (Of: its
// CPU clock, ns). CPUResolution is the coarsest of the counters summed. PeakRSS is the sum of
// the processes' peaks, an upper bound of the pod's peak.
func Others() (Usage, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return Usage{}, err
	}
	self := os.Getpid()
	own, _ := cgroupOf(self)
	counted := map[string]bool{} // cgroups whose usage_usec is in sum
	var sum Usage
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		u, err := Of(pid)
		if err != nil {
			continue // gone meanwhile, or a kernel thread without status
		}
		if cg, ok := cgroupOf(pid); ok && cgroupApart(cg, own) {
			if counted[cg] {
				u.CPU, u.CPUResolution = 0, 0
			} else if cpu, err := cgroupCPU(cg); err == nil {
				counted[cg] = true
				u.CPU, u.CPUResolution = cpu, ResolutionRusage
			}
		}
		sum.CPU += u.CPU
		sum.CPUResolution = max(sum.CPUResolution, u.CPUResolution)
		sum.PeakRSS += u.PeakRSS
		sum.RSS += u.RSS
		n++
	}
	if n == 0 {
		return Usage{}, errors.New("no other process is visible: the pod must share its process namespace (shareProcessNamespace: true)")
	}
	return sum, nil
}

// cgroupOf is the cgroup v2 path of process pid as /proc/PID/cgroup gives it ("0::/path"); ok
// false without cgroup v2, for the root, and for a cgroup outside this process's cgroup
// namespace ("/../sibling", which cgroupRoot does not hold).
func cgroupOf(pid int) (string, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", false
	}
	return parseCgroup(string(data))
}

func parseCgroup(data string) (string, bool) {
	for _, line := range strings.Split(data, "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			p = strings.TrimSpace(p)
			if p == "/" || !strings.HasPrefix(p, "/") || p == "/.." || strings.HasPrefix(p, "/../") {
				return "", false
			}
			return p, true
		}
	}
	return "", false
}

// cgroupApart reports whether cgroup cg leaves this process (in own, "" when unknown) out: not
// own, nor one of its ancestors.
func cgroupApart(cg, own string) bool {
	return own == "" || (cg != own && !strings.HasPrefix(own, cg+"/"))
}

// cgroupCPU is usage_usec of cgroup v2 path cg, in µs; an error where cgroup v2 is not mounted at
// cgroupRoot (a v1 or hybrid host) or cg's files are not there.
func cgroupCPU(cg string) (time.Duration, error) {
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err != nil {
		return 0, err
	}
	data, err := os.ReadFile(filepath.Join(cgroupRoot, cg, "cpu.stat"))
	if err != nil {
		return 0, err
	}
	return parseCPUStat(string(data))
}

func parseCPUStat(data string) (time.Duration, error) {
	for _, line := range strings.Split(data, "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("cpu.stat: %w", err)
			}
			return time.Duration(us) * time.Microsecond, nil
		}
	}
	return 0, errors.New("cpu.stat: no usage_usec")
}

// UsageHandler serves s's usage as JSON: at ?at=UNIX-NANOSECONDS, or the latest sample.
func UsageHandler(s *Sampler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var u Usage
		var err error
		if at := r.URL.Query().Get("at"); at != "" {
			ns, perr := strconv.ParseInt(at, 10, 64)
			if perr != nil {
				http.Error(w, "at: want Unix nanoseconds", http.StatusBadRequest)
				return
			}
			u, err = s.At(r.Context(), time.Unix(0, ns))
		} else {
			u, err = s.Now()
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		res := u.CPUResolution.Seconds()
		_ = json.NewEncoder(w).Encode(usageJSON{CPUSeconds: u.CPU.Seconds(), CPUResolutionSeconds: &res, PeakRSSBytes: u.PeakRSS, RSSBytes: u.RSS})
	})
}

// Fetch reads a UsageHandler's usage at url as it was when called (?at=now: the sampler
// interpolates, so the request's own travel time does not count); each call is one request,
// bounded by timeout.
func Fetch(url string, timeout time.Duration) func() (Usage, error) {
	client := &http.Client{Timeout: timeout}
	return func() (Usage, error) {
		at := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"?at="+strconv.FormatInt(at.UnixNano(), 10), nil)
		if err != nil {
			return Usage{}, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return Usage{}, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return Usage{}, fmt.Errorf("%s: %s", url, resp.Status)
		}
		var u usageJSON
		if err := json.NewDecoder(resp.Body).Decode(&u); err != nil {
			return Usage{}, fmt.Errorf("%s: %w", url, err)
		}
		res := ClockTick // a sidecar that does not say read /proc/PID/stat's ticks
		if u.CPUResolutionSeconds != nil {
			res = time.Duration(math.Round(*u.CPUResolutionSeconds * float64(time.Second)))
		}
		return Usage{CPU: time.Duration(math.Round(u.CPUSeconds * float64(time.Second))), CPUResolution: res,
			PeakRSS: u.PeakRSSBytes, RSS: u.RSSBytes}, nil
	}
}
