package mqttsn

import (
	"net/netip"
	"time"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// endReason says why a session ended.
type endReason uint8

const (
	endDisconnect endReason = iota // DISCONNECT from the client
	endLost                        // keep-alive, sleep or retransmission deadline missed: the will applies
	endReplaced                    // a new CONNECT with the same client id or address
	endRejected                    // the broker refused or could not be reached
	endUpstream                    // the broker closed the client's MQTT connection
	endShutdown                    // the gateway stops
)

// onConnect handles CONNECT: a new session, a retransmitted CONNECT, or a sleeping client
// returning to the active state (MQTT-SN 1.2 §6.14; its flags are then ignored: the session
// goes on).
func (g *Gateway) onConnect(from netip.AddrPort, c *client, m *sn.Connect) {
	if m.ProtocolID != sn.ProtocolID || len(m.ClientID) == 0 || len(m.ClientID) > 255 {
		g.st.rejected.Add(1)
		g.st.drop(DropUnsupported)
		g.reply, _ = (&sn.Code{T: sn.CONNACK, ReturnCode: sn.RejectedNotSupported}).Append(g.reply[:0])
		g.send(from, g.reply)
		return
	}
	if c != nil {
		c.mu.Lock()
		if c.id == string(m.ClientID) && c.resumeLocked(m) {
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		g.remove(c, endReplaced)
	}
	id := string(m.ClientID)
	g.mu.Lock()
	if old := g.byID[id]; old != nil {
		old.mu.Lock()
		if old.state == stAsleep || old.state == stAwake { // the sleeping client woke up at a new address
			delete(g.byAddr, old.addr)
			old.addr = from
			g.byAddr[from] = old
			old.lastRx.Store(time.Now().UnixNano())
			old.resumeLocked(m)
			old.mu.Unlock()
			g.mu.Unlock()
			return
		}
		old.mu.Unlock()
		g.mu.Unlock()
		g.remove(old, endReplaced)
		g.mu.Lock()
	}
	if len(g.free) == 0 || g.byID[id] != nil || g.byAddr[from] != nil {
		g.mu.Unlock()
		g.st.rejected.Add(1)
		g.reply, _ = (&sn.Code{T: sn.CONNACK, ReturnCode: sn.RejectedCongestion}).Append(g.reply[:0])
		g.send(from, g.reply)
		return
	}
	slot := g.free[len(g.free)-1]
	g.free = g.free[:len(g.free)-1]
	c = g.newClient(slot, id, from)
	g.byAddr[from] = c
	g.byID[id] = c
	g.slots[slot].Store(c)
	g.mu.Unlock()
	if n := g.st.clients.Add(1); n > g.st.clientsPeak.Load() {
		g.st.clientsPeak.Store(n)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.keepAlive = time.Duration(m.Duration) * time.Second
	c.clean = m.Flags.CleanSession()
	c.resetAlive()
	if m.Flags.Will() {
		c.step = willAwaitTopic
		c.sendEmpty(sn.WILLTOPICREQ)
		return
	}
	c.openLocked()
}

// resumeLocked handles a CONNECT from the client's own session: it answers a retransmitted
// CONNECT again, or brings a sleeping client back to active. It reports false when the CONNECT
// starts a new session instead.
func (c *client) resumeLocked(m *sn.Connect) bool {
	switch c.state {
	case stConnecting:
		c.g.st.duplicates.Add(1)
		switch c.step {
		case willAwaitTopic:
			c.sendEmpty(sn.WILLTOPICREQ)
		case willAwaitMsg:
			c.sendEmpty(sn.WILLMSGREQ)
		}
		return true
	case stActive:
		if c.activity > 0 {
			return false
		}
		c.g.st.duplicates.Add(1)
		c.sendCode(sn.CONNACK, sn.Accepted)
		return true
	case stAsleep, stAwake:
		c.state = stActive
		c.keepAlive = time.Duration(m.Duration) * time.Second
		c.activity = 0
		c.resetAlive()
		c.sendCode(sn.CONNACK, sn.Accepted)
		c.resendOutLocked()
		c.pump()
		return true
	}
	return false
}

// openLocked connects the client's broker side on another goroutine; CONNACK follows.
func (c *client) openLocked() {
	c.step = willOpening
	c.g.wg.Add(1)
	go c.g.open(c)
}

func (g *Gateway) open(c *client) {
	defer g.wg.Done()
	select {
	case g.opening <- struct{}{}:
	case <-g.ctx.Done():
		return
	}
	err := g.up.open(g.ctx, c)
	<-g.opening
	c.mu.Lock()
	if c.state != stConnecting {
		c.mu.Unlock()
		return
	}
	if err != nil {
		g.o.Log("mqtt-sn gateway: client %s: %v", c.id, err)
		c.sendCode(sn.CONNACK, sn.RejectedCongestion)
		c.mu.Unlock()
		g.st.rejected.Add(1)
		g.remove(c, endRejected)
		return
	}
	c.state, c.step, c.activity = stActive, willNone, 0
	c.lastRx.Store(time.Now().UnixNano())
	c.resetAlive()
	c.sendCode(sn.CONNACK, sn.Accepted)
	c.mu.Unlock()
	g.st.connects.Add(1)
}

// onWill handles the will exchange during CONNECT (WILLTOPIC, WILLMSG) and will updates of an
// active client (WILLTOPICUPD, WILLMSGUPD).
func (c *client) onWill(t sn.MsgType, body []byte) {
	g := c.g
	wt := sn.WillTopic{T: t}
	wm := sn.WillMsg{T: t}
	var err error
	if t == sn.WILLTOPIC || t == sn.WILLTOPICUPD {
		err = wt.Decode(body)
	} else {
		err = wm.Decode(body)
	}
	if err != nil {
		g.st.drop(DropMalformed)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case t == sn.WILLTOPIC && c.state == stConnecting && c.step == willAwaitTopic:
		if wt.Empty() {
			c.will = will{}
			c.openLocked()
			return
		}
		c.will = will{set: true, topic: string(wt.Topic), qos: byte(max(0, wt.Flags.QoS())), retain: wt.Flags.Retain()}
		c.step = willAwaitMsg
		c.sendEmpty(sn.WILLMSGREQ)
	case t == sn.WILLTOPIC && c.state == stConnecting && c.step == willAwaitMsg:
		g.st.duplicates.Add(1) // our WILLMSGREQ was lost
		c.sendEmpty(sn.WILLMSGREQ)
	case t == sn.WILLMSG && c.state == stConnecting && c.step == willAwaitMsg:
		c.will.msg = append([]byte(nil), wm.Msg...)
		c.openLocked()
	case t == sn.WILLMSG && c.state == stConnecting && c.step == willOpening:
		g.st.duplicates.Add(1)
	case t == sn.WILLTOPICUPD && c.state == stActive:
		if wt.Empty() {
			c.will = will{}
		} else {
			c.will.set, c.will.topic = true, string(wt.Topic)
			c.will.qos, c.will.retain = byte(max(0, wt.Flags.QoS())), wt.Flags.Retain()
		}
		c.willUpdate = true
		c.activity++
		c.sendCode(sn.WILLTOPICRESP, sn.Accepted)
	case t == sn.WILLMSGUPD && c.state == stActive:
		c.will.msg = append(c.will.msg[:0], wm.Msg...)
		c.willUpdate = true
		c.activity++
		c.sendCode(sn.WILLMSGRESP, sn.Accepted)
	default:
		g.st.drop(DropUnexpected)
	}
}

// onPingreq answers an active client, or wakes a sleeping one: the gateway sends what it
// buffered, then PINGRESP, and the client is asleep again (MQTT-SN 1.2 §6.14).
func (g *Gateway) onPingreq(from netip.AddrPort, c *client, m *sn.Pingreq) {
	if len(m.ClientID) > 0 && (c == nil || c.id != string(m.ClientID)) {
		g.mu.Lock()
		s := g.byID[string(m.ClientID)]
		if s != nil {
			s.mu.Lock()
			if s.addr != from && (s.state == stAsleep || s.state == stAwake) {
				delete(g.byAddr, s.addr)
				s.addr = from
				g.byAddr[from] = s
			}
			s.mu.Unlock()
		}
		g.mu.Unlock()
		if s == nil || (c != nil && c != s) {
			g.st.drop(DropNotConnected)
			return
		}
		c = s
		c.lastRx.Store(time.Now().UnixNano())
	}
	if c == nil {
		g.st.drop(DropNotConnected)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case stActive:
		c.sendEmpty(sn.PINGRESP)
	case stAsleep, stAwake:
		if c.addr != from {
			g.st.drop(DropNotConnected)
			return
		}
		c.state = stAwake
		c.resetAlive()
		c.resendOutLocked()
		c.pump()
	default:
		g.st.drop(DropUnexpected)
	}
}

// onDisconnect ends the session, or with a duration puts the client to sleep.
func (c *client) onDisconnect(m *sn.Disconnect) {
	c.mu.Lock()
	c.sendDisconnect()
	if m.HasDuration && m.Duration > 0 && c.state != stConnecting {
		c.state = stAsleep
		c.sleep = time.Duration(m.Duration) * time.Second
		c.retryTimer.Stop()
		c.resetAlive()
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.g.remove(c, endDisconnect)
}

// supervision returns how long the client may stay silent in its state (0: unsupervised). The
// keep-alive tolerance is 1.5 times the announced period, as in MQTT.
func (c *client) supervision() time.Duration {
	cfg := &c.g.cfg
	exchange := time.Duration(cfg.MaxRetries+1)*cfg.RetryInterval + cfg.BrokerTimeout
	switch c.state {
	case stConnecting:
		return exchange
	case stActive:
		return c.keepAlive * 3 / 2
	case stAsleep:
		return c.sleep * 3 / 2
	case stAwake:
		return max(c.sleep*3/2, exchange)
	}
	return 0
}

func (c *client) resetAlive() {
	if d := c.supervision(); d > 0 {
		c.aliveTimer.Reset(d)
	} else {
		c.aliveTimer.Stop()
	}
}

// checkAlive runs when the supervision timer fires: a client silent for too long is lost.
func (c *client) checkAlive() {
	c.mu.Lock()
	d := c.supervision()
	if c.state == stGone || d == 0 {
		c.mu.Unlock()
		return
	}
	idle := time.Since(time.Unix(0, c.lastRx.Load()))
	if idle < d {
		c.aliveTimer.Reset(d - idle)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.g.o.Log("mqtt-sn gateway: client %s lost: silent for %v", c.id, idle.Round(time.Millisecond))
	c.g.remove(c, endLost)
}

// remove ends a session: it leaves the tables at once, and its broker side is closed (with the
// will when lost).
func (g *Gateway) remove(c *client, why endReason) {
	g.mu.Lock()
	c.mu.Lock()
	if c.state == stGone {
		c.mu.Unlock()
		g.mu.Unlock()
		return
	}
	if why == endUpstream || why == endShutdown {
		c.sendDisconnect() // tell the client it has no session any more
	}
	c.state = stGone
	if g.byAddr[c.addr] == c {
		delete(g.byAddr, c.addr)
	}
	if g.byID[c.id] == c {
		delete(g.byID, c.id)
	}
	g.slots[c.slot].Store(nil)
	g.free = append(g.free, c.slot)
	c.retryTimer.Stop()
	c.aliveTimer.Stop()
	c.q.reset()
	c.space.Broadcast()
	subs := c.subs
	c.subs = nil
	c.mu.Unlock()
	g.mu.Unlock()
	g.st.clients.Add(-1)
	switch why {
	case endLost:
		g.st.lost.Add(1)
	case endDisconnect:
		g.st.disconnects.Add(1)
	}
	g.up.close(c, subs, why != endLost)
}

// Replies under c.mu, encoded into the client's scratch buffer.

func (c *client) sendEmpty(t sn.MsgType) {
	c.scratch = append(c.scratch[:0], 2, byte(t))
	c.g.send(c.addr, c.scratch)
}

func (c *client) sendCode(t sn.MsgType, rc sn.ReturnCode) {
	c.scratch = append(c.scratch[:0], 3, byte(t), byte(rc))
	c.g.send(c.addr, c.scratch)
}

func (c *client) sendIDAck(t sn.MsgType, topicID, msgID uint16, rc sn.ReturnCode) {
	c.scratch = sn.AppendIDAck(c.scratch[:0], t, topicID, msgID, rc)
	c.g.send(c.addr, c.scratch)
}

func (c *client) sendAck(t sn.MsgType, msgID uint16) {
	c.scratch = sn.AppendAck(c.scratch[:0], t, msgID)
	c.g.send(c.addr, c.scratch)
}

func (c *client) sendDisconnect() { c.sendEmpty(sn.DISCONNECT) }
