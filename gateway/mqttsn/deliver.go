package mqttsn

import (
	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// wireTopic is how topic tp travels to this client: as a short name, as the predefined id the
// client subscribed with, or as a normal id it knows; register reports that the client must
// first learn the id through REGISTER (a message on a wildcard subscription).
func (c *client) wireTopic(tp *topic) (t sn.TopicIDType, id uint16, register bool) {
	if id, ok := tp.shortID(); ok {
		return sn.TopicShort, id, false
	}
	if c.pre.has(tp.id) {
		return sn.TopicPredefined, tp.id, false
	}
	return sn.TopicNormal, tp.id, !c.known.has(tp.id)
}

// deliver sends a broker message to the client, or queues it behind the client's outstanding
// QoS 1/2 message or while it sleeps. It runs on a broker connection's reader goroutine. When
// the queue is full, a QoS 0 message is dropped; a QoS 1/2 message waits for room (the broker
// connection stops reading, so the broker holds the backlog) unless the client sleeps, whose
// buffer is bounded and drops.
func (c *client) deliver(tp *topic, data []byte, qos byte, retain bool) {
	g := c.g
	if sn.Size(5+len(data)) > sn.MaxUDPPayload {
		g.st.drop(DropTooLarge)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		switch c.state {
		case stGone, stConnecting:
			g.st.drop(DropClientGone)
			return
		case stActive:
			if c.out.kind == outNone && c.q.empty() {
				if t, id, register := c.wireTopic(tp); !register {
					c.sendPublishLocked(tp, t, id, qos, retain, data)
					return
				}
			}
		}
		if c.q.fits(len(data)) {
			c.q.push(tp.id, qos, retain, data)
			c.pump()
			return
		}
		if qos == 0 || c.state == stAsleep {
			g.st.drop(DropQueueFull)
			return
		}
		c.space.Wait()
	}
}

// sendPublishLocked sends a PUBLISH; at QoS 1 and 2 it becomes the outstanding message, kept for
// retransmission.
func (c *client) sendPublishLocked(tp *topic, t sn.TopicIDType, id uint16, qos byte, retain bool, data []byte) {
	f := sn.Flags(0).WithQoS(int8(qos)).WithTopicIDType(t)
	if retain {
		f |= sn.FlagRetain
	}
	c.g.st.publishesOut.Add(1)
	if qos == 0 {
		c.scratch, _ = sn.AppendPublish(c.scratch[:0], f, id, 0, data)
		c.g.send(c.addr, c.scratch)
		return
	}
	msgID := c.nextID()
	c.out.buf, _ = sn.AppendPublish(c.out.buf[:0], f, id, msgID, data)
	c.out.kind, c.out.msgID, c.out.qos, c.out.topic, c.out.retries = outPublish, msgID, qos, tp, 0
	c.g.send(c.addr, c.out.buf)
	c.retryTimer.Reset(c.g.cfg.RetryInterval)
}

// pump sends queued messages while nothing is outstanding: QoS 0 ones straight away, up to the
// next QoS 1/2 message or REGISTER. A waking client gets PINGRESP once its queue is empty and
// goes back to sleep.
func (c *client) pump() {
	popped := false
	defer func() {
		if popped {
			c.space.Broadcast()
		}
	}()
	for c.out.kind == outNone && (c.state == stActive || c.state == stAwake) {
		e, ok := c.q.peek()
		if !ok {
			if c.state == stAwake {
				c.sendEmpty(sn.PINGRESP)
				c.state = stAsleep
				c.resetAlive()
			}
			return
		}
		tp := c.g.topics.get(e.topic)
		t, id, register := c.wireTopic(tp)
		if register {
			msgID := c.nextID()
			c.out.buf, _ = (&sn.Register{TopicID: tp.id, MsgID: msgID, TopicName: []byte(tp.name)}).Append(c.out.buf[:0])
			c.out.kind, c.out.msgID, c.out.topic, c.out.retries = outRegister, msgID, tp, 0
			c.g.send(c.addr, c.out.buf)
			c.retryTimer.Reset(c.g.cfg.RetryInterval)
			return
		}
		c.sendPublishLocked(tp, t, id, e.qos, e.retain, e.data)
		c.q.pop(e)
		popped = true
	}
}

// onDownstreamAck handles the client's PUBACK, PUBREC and PUBCOMP for the gateway's outstanding
// PUBLISH.
func (c *client) onDownstreamAck(t sn.MsgType, body []byte) {
	g := c.g
	var msgID uint16
	rc := sn.Accepted
	if t == sn.PUBACK {
		a := sn.IDAck{T: t}
		if a.Decode(body) != nil {
			g.st.drop(DropMalformed)
			return
		}
		msgID, rc = a.MsgID, a.ReturnCode
	} else {
		a := sn.Ack{T: t}
		if a.Decode(body) != nil {
			g.st.drop(DropMalformed)
			return
		}
		msgID = a.MsgID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out.msgID != msgID || c.out.kind == outNone || c.out.kind == outRegister {
		g.st.duplicates.Add(1) // a late answer to a retransmission
		return
	}
	switch {
	case t == sn.PUBACK && c.out.kind == outPublish:
		if rc != sn.Accepted {
			g.st.drop(DropRejected)
			if rc == sn.RejectedInvalidTopicID {
				c.known.clear(c.out.topic.id) // register it again next time
			}
		}
		c.finishOutLocked()
	case t == sn.PUBREC && c.out.kind == outPublish && c.out.qos == 2, t == sn.PUBREC && c.out.kind == outPubrel:
		c.out.kind, c.out.retries = outPubrel, 0
		c.out.buf = sn.AppendAck(c.out.buf[:0], sn.PUBREL, msgID)
		c.g.send(c.addr, c.out.buf)
		c.retryTimer.Reset(g.cfg.RetryInterval)
	case t == sn.PUBCOMP && c.out.kind == outPubrel:
		c.finishOutLocked()
	default:
		g.st.drop(DropUnexpected)
	}
}

// onRegack completes the gateway's REGISTER.
func (c *client) onRegack(m *sn.IDAck) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out.kind != outRegister || c.out.msgID != m.MsgID {
		c.g.st.drop(DropUnexpected)
		return
	}
	if m.ReturnCode == sn.Accepted {
		c.known.set(c.out.topic.id)
	} else if e, ok := c.q.peek(); ok { // the client refuses the topic: drop the message
		c.q.pop(e)
		c.space.Broadcast()
		c.g.st.drop(DropRejected)
	}
	c.finishOutLocked()
}

func (c *client) finishOutLocked() {
	c.out.kind = outNone
	c.retryTimer.Stop()
	c.pump()
}

// resendOutLocked sends the outstanding message again at once (a client waking up).
func (c *client) resendOutLocked() {
	if c.out.kind == outNone {
		return
	}
	if c.out.kind == outPublish {
		flags := 2 // the flags byte follows the header: 2 bytes, or 4 in the long length form
		if c.out.buf[0] == 0x01 {
			flags = 4
		}
		c.out.buf[flags] |= byte(sn.FlagDUP)
	}
	c.g.send(c.addr, c.out.buf)
	c.retryTimer.Reset(c.g.cfg.RetryInterval)
}

// retry runs when T_retry passed without an answer: send again with DUP, or after N_retry
// retransmissions give the client up as lost.
func (c *client) retry() {
	c.mu.Lock()
	if c.out.kind == outNone || (c.state != stActive && c.state != stAwake) {
		c.mu.Unlock()
		return
	}
	if c.out.retries >= c.g.cfg.MaxRetries {
		c.mu.Unlock()
		c.g.o.Log("mqtt-sn gateway: client %s lost: no answer after %d retransmissions", c.id, c.g.cfg.MaxRetries)
		c.g.remove(c, endLost)
		return
	}
	c.out.retries++
	c.g.st.retransmissions.Add(1)
	c.resendOutLocked()
	c.mu.Unlock()
}
