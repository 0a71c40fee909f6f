package proc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Sampler reads a usage function every interval and answers what it was at a given moment, by
// linear interpolation between the samples around it. A worker asks for the usage at the
// instant its measured window opened or closed; the answer does not depend on how long the
// request took to arrive (over an emulated NB-IoT link, seconds).
type Sampler struct {
	read     func() (Usage, error)
	interval time.Duration
	keep     int

	mu      sync.Mutex
	samples []sample // oldest first, at most keep
	changed chan struct{}
	err     error // the latest read's error
}

type sample struct {
	t time.Time
	u Usage
}

// Sampling every 200 ms and keeping 3 hours of samples (54,000, about 2.6 MB) covers any
// measured window a benchmark's timeout allows by default, to within 200 ms of CPU time spread.
const (
	SampleInterval = 200 * time.Millisecond
	SampleKeep     = 54_000
)

// NewSampler samples read every interval, keeping the last keep samples, until ctx ends.
func NewSampler(ctx context.Context, read func() (Usage, error), interval time.Duration, keep int) *Sampler {
	s := &Sampler{read: read, interval: interval, keep: keep, changed: make(chan struct{})}
	s.take()
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.take()
			case <-ctx.Done():
				return
			}
		}
	}()
	return s
}

// take reads a sample, stamped with the middle of the read: not the ticker's time, which on a
// loaded machine can be well before the read.
func (s *Sampler) take() {
	before := time.Now()
	u, err := s.read()
	now := before.Add(time.Since(before) / 2)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
	if err == nil {
		if len(s.samples) == s.keep {
			s.samples = append(s.samples[:0], s.samples[1:]...)
		}
		s.samples = append(s.samples, sample{now, u})
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// Now is the latest sample.
func (s *Sampler) Now() (Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 {
		return Usage{}, s.errOr(errors.New("no sample yet"))
	}
	return s.samples[len(s.samples)-1].u, nil
}

func (s *Sampler) errOr(def error) error {
	if s.err != nil {
		return s.err
	}
	return def
}

// At is the usage at t: CPU interpolated between the samples around t, peak and resident
// memory from the first sample at or after t. A t newer than the latest sample waits for the
// next one (at most a few intervals: clocks of two pods on different nodes differ a little).
func (s *Sampler) At(ctx context.Context, t time.Time) (Usage, error) {
	deadline := time.Now().Add(3 * s.interval)
	for {
		s.mu.Lock()
		u, ok, err := s.atLocked(t)
		changed := s.changed
		s.mu.Unlock()
		if ok || err != nil {
			return u, err
		}
		if time.Now().After(deadline) {
			return Usage{}, fmt.Errorf("no sample after %s yet: %w", t.UTC().Format(time.RFC3339Nano), s.errOr(errors.New("sampling stopped")))
		}
		select {
		case <-changed:
		case <-time.After(s.interval):
		case <-ctx.Done():
			return Usage{}, ctx.Err()
		}
	}
}

// atLocked answers At from the samples; ok false means t is newer than every sample.
func (s *Sampler) atLocked(t time.Time) (Usage, bool, error) {
	n := len(s.samples)
	if n == 0 || s.samples[n-1].t.Before(t) {
		return Usage{}, false, nil
	}
	i := sort.Search(n, func(i int) bool { return !s.samples[i].t.Before(t) }) // first at or after t
	after := s.samples[i]
	if i == 0 {
		if after.t.Sub(t) > s.interval {
			return Usage{}, false, fmt.Errorf("%s is before the oldest sample kept (%s)", t.UTC().Format(time.RFC3339Nano), after.t.UTC().Format(time.RFC3339Nano))
		}
		return after.u, true, nil
	}
	return Interpolate(s.samples[i-1].t, s.samples[i-1].u, after.t, after.u, t), true, nil
}

// Interpolate is the usage at t between a at ta and b at tb (ta ≤ t ≤ tb): CPU on the straight
// line between them, memory as at tb; CPUResolution the coarser of the two.
func Interpolate(ta time.Time, a Usage, tb time.Time, b Usage, t time.Time) Usage {
	u := b
	u.CPUResolution = max(a.CPUResolution, b.CPUResolution)
	if span := tb.Sub(ta); span > 0 {
		u.CPU = a.CPU + time.Duration(float64(b.CPU-a.CPU)*float64(t.Sub(ta))/float64(span))
	}
	return u
}
