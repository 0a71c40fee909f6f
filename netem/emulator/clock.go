//go:build linux

package emulator

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// clock reads time in nanoseconds on CLOCK_MONOTONIC's scale, cheaply (Go's monotonic clock is
// CLOCK_MONOTONIC read through the vDSO), so that an alarm can be set for an absolute time.
type clock struct {
	base     time.Time
	baseMono int64
}

func newClock() clock {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return clock{base: time.Now(), baseMono: ts.Nano()}
}

func (c clock) now() int64 { return c.baseMono + int64(time.Since(c.base)) }

// alarm is a timerfd waited on through Go's poller. Go's own timers fire up to a millisecond
// late when the process idles (the netpoller waits in whole milliseconds), and a blocking
// clock_nanosleep would hold a P for its whole length, starving other goroutines until sysmon
// takes it back; a timerfd fires on time (an hrtimer, no slack) and its waiter holds no P.
type alarm struct {
	f   *os.File
	raw syscall.RawConn
}

func newAlarm() (*alarm, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	raw, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &alarm{f: f, raw: raw}, nil
}

// set makes the alarm go off at t on the clock, at once if t has passed. After close it does
// nothing.
func (a *alarm) set(t int64) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(t, 1))}
	_ = a.raw.Control(func(fd uintptr) { _ = unix.TimerfdSettime(int(fd), unix.TFD_TIMER_ABSTIME, &spec, nil) })
}

// wait blocks until the alarm goes off or is closed.
func (a *alarm) wait() error {
	var b [8]byte
	_, err := a.f.Read(b[:])
	return err
}

func (a *alarm) close() error { return a.f.Close() }
