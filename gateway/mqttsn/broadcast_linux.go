package mqttsn

import (
	"net/netip"

	"golang.org/x/sys/unix"
)

// subnetBroadcast is the broadcast address of the IPv4 subnet ip is configured on (198.18.0.3 for
// 198.18.0.2/30), looked up with ioctls on fd, a socket in the gateway's network namespace (so a
// gateway listening inside the link emulator's server namespace sees that namespace's
// interfaces). ok is false when ip's prefix is /31 or /32, which has none, or when no interface
// has ip.
func subnetBroadcast(fd uintptr, ip netip.Addr) (b netip.Addr, ok bool) {
	for index := uint32(1); index < 4096; index++ {
		ifr, err := unix.NewIfreq("x")
		if err != nil {
			return b, false
		}
		ifr.SetUint32(index)
		if unix.IoctlIfreq(int(fd), unix.SIOCGIFNAME, ifr) != nil {
			if index > 256 {
				return b, false // indexes are dense in a namespace of a few interfaces
			}
			continue
		}
		name := ifr.Name()
		if ifr, err = unix.NewIfreq(name); err != nil || unix.IoctlIfreq(int(fd), unix.SIOCGIFADDR, ifr) != nil {
			continue
		}
		a, err := ifr.Inet4Addr()
		if err != nil || netip.AddrFrom4([4]byte(a)) != ip {
			continue
		}
		if ifr, err = unix.NewIfreq(name); err != nil || unix.IoctlIfreq(int(fd), unix.SIOCGIFNETMASK, ifr) != nil {
			return b, false
		}
		m, err := ifr.Inet4Addr()
		if err != nil {
			return b, false
		}
		v, mask := ip.As4(), [4]byte(m)
		ones := 0
		for i := range v {
			v[i] |= ^mask[i]
			for bit := range 8 {
				if mask[i]&(0x80>>bit) != 0 {
					ones++
				}
			}
		}
		if ones >= 31 {
			return b, false
		}
		return netip.AddrFrom4(v), true
	}
	return b, false
}
