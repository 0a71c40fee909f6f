// Package keepalive sends a client's keep-alive ping when, and only when, the connection has sent
// nothing for the keep-alive period: a ping K after the last packet, as device clients do (Eclipse
// Paho's rule). MQTT and MQTT-SN let the server close a session only after 1.5 × K without a
// packet, so a ping at K is in time, and a device that sends nothing else pings exactly every K —
// what a radio's energy depends on (docs/energy.md).
package keepalive

import (
	"sync"
	"sync/atomic"
	"time"
)

// epoch is the monotonic clock's zero for the writes' times.
var epoch = time.Now()

func now() time.Duration { return time.Since(epoch) }

// Next decides at time now, the last write at last: ping now (and look again one period later),
// or wait until the period since the last write is over.
func Next(last, now, period time.Duration) (ping bool, wait time.Duration) {
	if due := last + period; now < due {
		return false, due - now
	}
	return true, period
}

// Pinger pings a connection on its keep-alive period. Its methods are nil-safe: a connection
// without keep-alive has none.
type Pinger struct {
	period time.Duration
	last   atomic.Int64 // when the connection last sent a packet (since epoch)
	ping   func() error
	fail   func(error)

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// New is a pinger that pings with ping once period has passed without Wrote, from Start on; an
// error from ping goes to fail and stops it.
func New(period time.Duration, ping func() error, fail func(error)) *Pinger {
	p := &Pinger{period: period, ping: ping, fail: fail}
	p.last.Store(int64(now()))
	return p
}

// Start arms the pinger once the session is open (no ping may precede the CONNACK).
func (p *Pinger) Start() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.timer = time.AfterFunc(max(0, time.Duration(p.last.Load())+p.period-now()), p.tick)
	}
}

// Wrote records that the connection sent a packet now.
func (p *Pinger) Wrote() {
	if p != nil {
		p.last.Store(int64(now()))
	}
}

// Stop stops the pinger.
func (p *Pinger) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.timer != nil {
		p.timer.Stop()
	}
}

func (p *Pinger) tick() {
	t := now()
	ping, wait := Next(time.Duration(p.last.Load()), t, p.period)
	if ping {
		p.last.Store(int64(t))
		if err := p.ping(); err != nil {
			p.fail(err)
			return
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.timer.Reset(wait)
	}
}
