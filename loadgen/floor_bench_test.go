//go:build linux

package loadgen_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/internal/proc"
)

// BenchmarkReceiverFloor measures what any receiver that reads each delivery when it arrives
// costs on this machine, next to Mosquitto: BenchmarkAgainstMosquitto's QoS 0 workload (8
// publishers, 8 subscribers, 256-byte payloads, closed loop), but with the engine's subscribers
// replaced by the cheapest receiver there is: one OS thread, one epoll set over the 8 sockets,
// 64 KB reads, no histograms, no loss tracking, one clock read per read. Its loadgen/broker-cpu is
// the floor the real engine cannot go below with the same publishers; receiver-µs/wake and
// wakes/msg say why (docs/benchmarks.md §1).
func BenchmarkReceiverFloor(b *testing.B) {
	br := benchBroker(b)
	for i := 0; i < b.N; i++ {
		const clients, payload = 8, 256
		recv, err := newFloorReceiver()
		if err != nil {
			b.Fatal(err)
		}
		for s := range clients {
			if err := recv.subscribe(br.Addr, fmt.Sprintf("floor-s%d", s), fmt.Sprintf("floor/%d", s)); err != nil {
				b.Fatal(err)
			}
		}
		go recv.run()

		var stop atomic.Bool
		var wg sync.WaitGroup
		for p := range clients {
			nc, err := net.Dial("tcp", br.Addr)
			if err != nil {
				b.Fatal(err)
			}
			c, err := mqtt.Connect(context.Background(), nc, mqtt.Options{
				Connect:         mqtt.ConnectOptions{ClientID: fmt.Sprintf("floor-p%d", p), CleanSession: true},
				WriteBufferSize: 16 << 10, // as the engine's closed-loop publishers
			})
			if err != nil {
				b.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Disconnect() //nolint:errcheck // end of the run
				body, topic := make([]byte, payload), fmt.Sprintf("floor/%d", p)
				for !stop.Load() {
					if _, err := c.Publish(topic, body, 0, false, false); err != nil {
						return
					}
				}
			}()
		}

		time.Sleep(2 * time.Second) // warm-up, as BenchmarkAgainstMosquitto
		b0, _ := br.Usage()
		s0, m0, w0, t0 := proc.Self(), recv.messages.Load(), recv.wakes.Load(), recv.threadCPU()
		time.Sleep(10 * time.Second)
		b1, _ := br.Usage()
		s1, m1, w1, t1 := proc.Self(), recv.messages.Load(), recv.wakes.Load(), recv.threadCPU()
		stop.Store(true)
		wg.Wait()
		recv.close()

		msgs, wakes := float64(m1-m0), float64(w1-w0)
		if msgs == 0 {
			b.Fatal("no message received")
		}
		loadgen, broker := (s1.CPU - s0.CPU).Seconds(), (b1.CPU - b0.CPU).Seconds()
		b.ReportMetric(msgs/10, "recv-msgs/s")
		b.ReportMetric(loadgen/msgs*1e6, "loadgen-cpu-µs/msg")
		b.ReportMetric(broker/msgs*1e6, "broker-cpu-µs/msg")
		b.ReportMetric(loadgen/broker, "loadgen/broker-cpu")
		b.ReportMetric(wakes/msgs, "wakes/msg")
		b.ReportMetric((t1-t0).Seconds()/wakes*1e6, "receiver-µs/wake")
	}
}

// floorReceiver is the minimal receiver: the subscribers' sockets in one level-triggered epoll
// set, served by one locked OS thread.
type floorReceiver struct {
	epfd     int
	conns    map[int32]*floorConn
	messages atomic.Int64
	wakes    atomic.Int64
	cpu      atomic.Int64 // the thread's CPU nanoseconds, sampled every 256 wake-ups
	start    time.Time
	done     chan struct{} // closed when run returns
	last     int64         // clock read of the latest batch, so the compiler keeps the read
}

type floorConn struct {
	fd  int
	buf []byte
	n   int
}

func newFloorReceiver() (*floorReceiver, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &floorReceiver{epfd: epfd, conns: map[int32]*floorConn{}, start: time.Now(), done: make(chan struct{})}, nil
}

func (r *floorReceiver) threadCPU() time.Duration { return time.Duration(r.cpu.Load()) }

// subscribe connects a subscriber with blocking system calls, then hands its socket to epoll.
func (r *floorReceiver) subscribe(addr, id, topic string) error {
	ap, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	sa := &unix.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	if err := unix.Connect(fd, sa); err != nil {
		return err
	}
	ack := make([]byte, 16)
	for _, pkt := range [][]byte{
		mqtt.AppendConnect(nil, &mqtt.ConnectOptions{Version: mqtt.V311, ClientID: id, CleanSession: true}),
		mqtt.AppendSubscribe(nil, mqtt.V311, 1, []mqtt.Subscription{{Filter: topic}}),
	} {
		if _, err := unix.Write(fd, pkt); err != nil {
			return err
		}
		if _, err := unix.Read(fd, ack); err != nil { // CONNACK, SUBACK: one small segment each
			return err
		}
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return err
	}
	r.conns[int32(fd)] = &floorConn{fd: fd, buf: make([]byte, 64<<10)}
	return unix.EpollCtl(r.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)})
}

func (r *floorReceiver) run() {
	defer close(r.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	events := make([]unix.EpollEvent, len(r.conns))
	for {
		n, err := unix.EpollWait(r.epfd, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		if r.wakes.Add(1)%256 == 0 {
			var ru unix.Rusage
			if unix.Getrusage(unix.RUSAGE_THREAD, &ru) == nil {
				r.cpu.Store(ru.Utime.Nano() + ru.Stime.Nano())
			}
		}
		for _, ev := range events[:n] {
			c := r.conns[ev.Fd]
			m, err := unix.Read(c.fd, c.buf[c.n:])
			if errors.Is(err, unix.EAGAIN) {
				continue
			}
			if err != nil || m == 0 {
				return // shut down by close, or the broker went away
			}
			c.n += m
			r.last = int64(time.Since(r.start))
			r.messages.Add(c.consume())
		}
	}
}

// consume counts the whole PUBLISH packets in c's buffer and keeps a partial one.
func (c *floorConn) consume() int64 {
	b, count := c.buf[:c.n], int64(0)
	for {
		size, ok := mqtt.PacketLen(b)
		if !ok || len(b) < size {
			break
		}
		if b[0]>>4 == mqtt.PUBLISH {
			count++
		}
		b = b[size:]
	}
	c.n = copy(c.buf, b)
	return count
}

// close ends run (a shut-down socket reads end of file) and then releases the descriptors.
func (r *floorReceiver) close() {
	for fd := range r.conns {
		_ = unix.Shutdown(int(fd), unix.SHUT_RDWR)
	}
	<-r.done
	for fd := range r.conns {
		_ = unix.Close(int(fd))
	}
	_ = unix.Close(r.epfd)
}
