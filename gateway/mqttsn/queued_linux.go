package mqttsn

import "golang.org/x/sys/unix"

// queuedBytes is the size of the next datagram queued on UDP socket fd (SIOCINQ), 0 if none.
func queuedBytes(fd uintptr) int {
	n, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ)
	if err != nil {
		return 0
	}
	return n
}
