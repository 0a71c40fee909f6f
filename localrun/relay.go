package localrun

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// A group with a network of its own (spec.groups[].network) sits behind a link of its own: its
// clients dial from the link's device namespace to a relay on the link's server side, which
// forwards to the address they would reach without the link (the broker, its WebSocket listener,
// the group's gateway). The relay runs in this process on sockets of the two sides; the link
// between device and relay is the emulated one, the rest loopback.

type dialFunc = func(ctx context.Context, network, address string) (net.Conn, error)

// relayTCP accepts connections on ln and joins each to a new connection to target, until ln is
// closed. The returned stop closes ln and every joined connection and waits for them.
func relayTCP(ln net.Listener, target string, dial dialFunc) (stop func()) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	track := func(c net.Conn, add bool) {
		mu.Lock()
		defer mu.Unlock()
		if add {
			conns[c] = struct{}{}
		} else {
			delete(conns, c)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				up, err := dial(ctx, "tcp", target)
				cancel()
				if err != nil {
					return
				}
				defer up.Close()
				track(c, true)
				track(up, true)
				defer track(c, false)
				defer track(up, false)
				join(c, up)
			}()
		}
	}()
	return func() {
		_ = ln.Close()
		mu.Lock()
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
}

// join copies both ways until both directions ended, passing each direction's end on (a half
// close where the connection has one).
func join(a, b net.Conn) {
	done := make(chan struct{}, 2)
	pass := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = dst.Close()
		}
		done <- struct{}{}
	}
	go pass(a, b)
	go pass(b, a)
	<-done
	<-done
}

// relayUDP forwards datagrams from each client address on pc to target from a socket of its
// own, and the replies back, until stop.
func relayUDP(pc net.PacketConn, target string, dial dialFunc) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	ups := map[string]net.Conn{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 65536)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			mu.Lock()
			up := ups[from.String()]
			if up == nil {
				if up, err = dial(ctx, "udp", target); err != nil {
					mu.Unlock()
					continue
				}
				ups[from.String()] = up
				wg.Add(1)
				go func() {
					defer wg.Done()
					back := make([]byte, 65536)
					for {
						m, err := up.Read(back)
						if err != nil {
							if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
								return
							}
							continue // an ICMP error of an earlier datagram
						}
						_, _ = pc.WriteTo(back[:m], from)
					}
				}()
			}
			mu.Unlock()
			_, _ = up.Write(buf[:n])
		}
	}()
	return func() {
		cancel()
		_ = pc.Close()
		mu.Lock()
		for _, up := range ups {
			_ = up.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
}
