package mqttsn

import (
	"fmt"
	"net"
	"time"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// startAdvertising sends ADVERTISE to cfg.AdvertiseAddress now and every AdvertiseInterval,
// announcing the interval as the Duration field (MQTT-SN 1.2 §6.1).
func (g *Gateway) startAdvertising() error {
	ua, err := net.ResolveUDPAddr("udp", g.cfg.AdvertiseAddress)
	if err != nil {
		return fmt.Errorf("mqtt-sn gateway: advertise address %q: %w", g.cfg.AdvertiseAddress, err)
	}
	to := ua.AddrPort()
	secs := uint16(min(g.cfg.AdvertiseInterval/time.Second, 65535))
	msg, _ := (&sn.Advertise{GatewayID: g.cfg.GatewayID, Duration: secs}).Append(nil)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		t := time.NewTicker(g.cfg.AdvertiseInterval)
		defer t.Stop()
		for {
			g.send(to, msg)
			select {
			case <-t.C:
			case <-g.ctx.Done():
				return
			}
		}
	}()
	return nil
}
