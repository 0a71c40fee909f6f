package testenv

import (
	"fmt"
	"net"
	"os"
	"testing"
)

// FreeUDPPorts is the first of n consecutive loopback UDP ports free right now, below the
// ephemeral range so that no other socket takes one meanwhile: for spec.mqttsn.sourcePort.
func FreeUDPPorts(t testing.TB, n int) int {
	t.Helper()
	for base := 20000 + os.Getpid()%5000; base < 32000; base += n {
		var held []net.PacketConn
		for p := base; p < base+n; p++ {
			pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				break
			}
			held = append(held, pc)
		}
		for _, pc := range held {
			_ = pc.Close()
		}
		if len(held) == n {
			return base
		}
	}
	t.Fatal("no free UDP ports")
	return 0
}
