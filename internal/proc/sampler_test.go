package proc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestInterpolate(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := Usage{CPU: time.Second, CPUResolution: ClockTick, PeakRSS: 10, RSS: 10}
	b := Usage{CPU: 3 * time.Second, CPUResolution: time.Nanosecond, PeakRSS: 20, RSS: 15}
	u := Interpolate(t0, a, t0.Add(time.Second), b, t0.Add(250*time.Millisecond))
	if u.CPU != 1500*time.Millisecond || u.PeakRSS != 20 || u.RSS != 15 || u.CPUResolution != ClockTick {
		t.Errorf("got %+v", u)
	}
	if u := Interpolate(t0, a, t0, b, t0); u.CPU != b.CPU {
		t.Errorf("same instant: %+v", u)
	}
}

// A process that uses exactly one CPU-second per second: the usage at a moment is that moment's
// distance from the start, whenever the question arrives — also through /usage?at= with a
// request delayed as an emulated link would delay it.
func TestSamplerAnswersForTheMomentAsked(t *testing.T) {
	start := time.Now()
	read := func() (Usage, error) { return Usage{CPU: time.Since(start), PeakRSS: 1 << 20}, nil }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := NewSampler(ctx, read, 20*time.Millisecond, 1000)
	time.Sleep(100 * time.Millisecond)

	// A moment in the past, between samples.
	at := start.Add(55 * time.Millisecond)
	u, err := s.At(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	if d := u.CPU - 55*time.Millisecond; d < -2*time.Millisecond || d > 2*time.Millisecond {
		t.Errorf("CPU at +55 ms: %v", u.CPU)
	}
	// A moment not sampled yet: waits for the next sample.
	at = time.Now().Add(10 * time.Millisecond)
	if u, err = s.At(ctx, at); err != nil || u.CPU < at.Sub(start)-2*time.Millisecond || u.CPU > at.Sub(start)+2*time.Millisecond {
		t.Errorf("CPU at a future moment: %v, %v (want %v)", u.CPU, err, at.Sub(start))
	}
	// Before everything kept.
	if _, err := s.At(ctx, start.Add(-time.Hour)); err == nil {
		t.Error("a moment an hour before the first sample was answered")
	}

	// Over HTTP, with the request held 300 ms on the way: the answer is for when Fetch was called.
	h := UsageHandler(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	fetch := Fetch(srv.URL, 5*time.Second)
	asked := time.Now()
	u, err = fetch()
	if err != nil {
		t.Fatal(err)
	}
	if want := asked.Sub(start); u.CPU < want-5*time.Millisecond || u.CPU > want+5*time.Millisecond || u.PeakRSS != 1<<20 {
		t.Errorf("fetched CPU %v, want %v (the moment asked, not the 300 ms later arrival)", u.CPU, want)
	}
	resp, err := http.Get(srv.URL + "?at=yesterday")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("?at=yesterday: %s", resp.Status)
	}
}

// The sampler on this process's real /proc figures: CPU burnt between two moments shows up.
func TestSamplerOnThisProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := NewSampler(ctx, Own, 20*time.Millisecond, 1000)
	time.Sleep(50 * time.Millisecond)
	s1, t1 := Self(), time.Now()
	for time.Since(t1) < 300*time.Millisecond { // burn CPU
	}
	s2, t2 := Self(), time.Now()
	a, err1 := s.At(ctx, t1)
	b, err2 := s.At(ctx, t2)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	// getrusage's own count over the same moments; the samples are 20 ms apart.
	want := s2.CPU - s1.CPU
	if used := b.CPU - a.CPU; used < want-50*time.Millisecond || used > want+50*time.Millisecond || want < 50*time.Millisecond {
		t.Errorf("CPU between the two moments: %v, getrusage says %v", used, want)
	}
	if b.PeakRSS <= 0 || b.RSS <= 0 {
		t.Errorf("memory %+v", b)
	}
}
