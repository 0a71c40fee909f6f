//go:build !linux

package mqttsn

import "net/netip"

// subnetBroadcast finds no subnet broadcast address where the interfaces' ioctls are unknown:
// the gateway then answers SEARCHGW on 255.255.255.255 and its own address only.
func subnetBroadcast(uintptr, netip.Addr) (netip.Addr, bool) { return netip.Addr{}, false }
