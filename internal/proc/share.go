package proc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"
)

// usageJSON is Usage on the wire (`msgbench usage`'s /usage).
type usageJSON struct {
	CPUSeconds   float64 `json:"cpuSeconds"`
	PeakRSSBytes int64   `json:"peakRSSBytes"`
	RSSBytes     int64   `json:"rssBytes"`
}

// Others sums the usage of every process this one can see but itself: in a pod that shares its
// process namespace, the other containers' (the broker's). PeakRSS is the sum of the processes'
// peaks, an upper bound of the pod's peak.
func Others() (Usage, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return Usage{}, err
	}
	self := os.Getpid()
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
		sum.CPU += u.CPU
		sum.PeakRSS += u.PeakRSS
		sum.RSS += u.RSS
		n++
	}
	if n == 0 {
		return Usage{}, errors.New("no other process is visible: the pod must share its process namespace (shareProcessNamespace: true)")
	}
	return sum, nil
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
		_ = json.NewEncoder(w).Encode(usageJSON{CPUSeconds: u.CPU.Seconds(), PeakRSSBytes: u.PeakRSS, RSSBytes: u.RSS})
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
		return Usage{CPU: time.Duration(u.CPUSeconds * float64(time.Second)), PeakRSS: u.PeakRSSBytes, RSS: u.RSSBytes}, nil
	}
}
