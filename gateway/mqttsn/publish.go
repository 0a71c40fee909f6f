package mqttsn

import (
	"time"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// resolve maps a topic id of a client's PUBLISH to its topic, or a return code for PUBACK.
// Normal ids are valid once any client registered them: ids are global, so the check is an
// array index.
func (g *Gateway) resolve(t sn.TopicIDType, id uint16) (*topic, sn.ReturnCode) {
	var tp *topic
	switch t {
	case sn.TopicNormal:
		tp = g.topics.get(id)
	case sn.TopicPredefined:
		tp = g.topics.predefined(id)
	case sn.TopicShort:
		if tp = g.topics.internShort(id); tp == nil {
			return nil, sn.RejectedCongestion
		}
	default:
		return nil, sn.RejectedNotSupported
	}
	if tp == nil {
		return nil, sn.RejectedInvalidTopicID
	}
	return tp, sn.Accepted
}

// onPublish forwards a client's QoS 0, 1 or 2 PUBLISH to the broker. QoS 1 and 2 are answered
// when the broker completes its side (PUBACK, or PUBCOMP for QoS 2, then PUBREC to the client),
// so PUBACK/PUBCOMP mean the broker has the message. A retransmission of a PUBLISH still in
// progress is not forwarded again.
func (c *client) onPublish(p *sn.Publish) {
	g := c.g
	c.mu.Lock()
	if c.state == stConnecting || c.state == stGone {
		c.mu.Unlock()
		g.st.drop(DropUnexpected)
		return
	}
	c.activity++
	qos := byte(p.Flags.QoS())
	tp, rc := g.resolve(p.Flags.TopicIDType(), p.TopicID)
	if tp == nil {
		c.sendIDAck(sn.PUBACK, p.TopicID, p.MsgID, rc)
		c.mu.Unlock()
		g.st.rejectedTopic.Add(1)
		return
	}
	bc := c.bc
	var tok int64
	var e *inEntry
	if qos > 0 {
		e = &c.in[p.MsgID%inSlots]
		now := time.Now().UnixNano()
		if e.state != inFree {
			if e.msgID == p.MsgID {
				g.st.duplicates.Add(1)
				if e.state == inAwaitRel { // our PUBREC was lost
					c.sendAck(sn.PUBREC, p.MsgID)
				}
				c.mu.Unlock()
				return
			}
			if time.Duration(now-e.since) < time.Duration(g.cfg.MaxRetries+1)*g.cfg.RetryInterval {
				c.mu.Unlock()
				g.st.drop(DropInflightExceeded)
				return
			}
			// The client gave up on that message long ago; reuse the slot.
		}
		*e = inEntry{msgID: p.MsgID, state: inAwaitBroker, qos: qos, topicID: p.TopicID, since: now}
		tok = c.token(p.MsgID)
	}
	c.mu.Unlock() // never hold a client's lock while writing to the broker
	// A QoS 0 publish waits in the connection's buffer while more datagrams are queued (readLoop
	// flushes): a client streaming QoS 0 then reaches the broker in few writes. A QoS 1/2 publish
	// goes out at once: its client, allowed one in flight, waits for the acknowledgement, so
	// holding it only adds latency (measured: half the QoS 1 rate with 16 clients).
	batch := qos == 0
	if err := bc.publish(tp.name, p.Data, qos, p.Flags.Retain(), tok, !batch); err != nil {
		if e != nil {
			c.mu.Lock()
			if e.msgID == p.MsgID && e.state == inAwaitBroker {
				e.state = inFree // the client retransmits after T_retry
			}
			c.mu.Unlock()
		}
		g.st.drop(DropInflightExceeded)
		return
	}
	if batch {
		g.markDirty(bc)
	}
	g.st.publishesIn.Add(1)
}

// completed runs on a broker connection's reader goroutine when the broker acknowledged a
// client's QoS 1 PUBLISH or completed a QoS 2 one. tok carries the client slot and message id.
func (g *Gateway) completed(tok int64, reason byte) {
	if tok == 0 {
		return // a will or QoS -1 message of the gateway's own
	}
	slot, gen, msgID := splitToken(tok)
	if int(slot) >= len(g.slots) {
		return
	}
	c := g.slots[slot].Load()
	if c == nil || c.gen != gen {
		return // the client left meanwhile
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &c.in[msgID%inSlots]
	if e.state != inAwaitBroker || e.msgID != msgID || c.state == stGone {
		return
	}
	rc := sn.Accepted
	if reason >= 0x80 {
		rc = sn.RejectedNotSupported
	}
	if e.qos == 1 || rc != sn.Accepted {
		e.state = inFree
		c.sendIDAck(sn.PUBACK, e.topicID, msgID, rc)
		return
	}
	e.state = inAwaitRel
	c.sendAck(sn.PUBREC, msgID)
}

// onPubrel completes a client's QoS 2 PUBLISH. PUBCOMP is sent even for an unknown message id:
// the client retransmits PUBREL when our PUBCOMP was lost.
func (c *client) onPubrel(msgID uint16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stGone {
		return
	}
	e := &c.in[msgID%inSlots]
	if e.state == inAwaitRel && e.msgID == msgID {
		e.state = inFree
	} else {
		c.g.st.duplicates.Add(1)
	}
	c.sendAck(sn.PUBCOMP, msgID)
}

// publishNoSession forwards a QoS -1 PUBLISH: no connection, predefined or short topic ids only,
// published at QoS 0.
func (g *Gateway) publishNoSession(c *client, p *sn.Publish) {
	var tp *topic
	switch p.Flags.TopicIDType() {
	case sn.TopicPredefined:
		tp = g.topics.predefined(p.TopicID)
	case sn.TopicShort:
		tp = g.topics.internShort(p.TopicID)
	}
	if tp == nil {
		g.st.drop(DropUnsupported)
		return
	}
	if c != nil {
		c.mu.Lock()
		c.activity++
		c.mu.Unlock()
	}
	if err := g.up.publishNoSession(tp.name, p.Data, 0, p.Flags.Retain()); err != nil {
		g.st.drop(DropInflightExceeded)
		return
	}
	g.st.publishesIn.Add(1)
}

// onRegister assigns a topic id to a name the client will publish to.
func (c *client) onRegister(m *sn.Register) {
	g := c.g
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stActive {
		g.st.drop(DropUnexpected)
		return
	}
	c.activity++
	if !validTopicName(m.TopicName) {
		c.sendIDAck(sn.REGACK, 0, m.MsgID, sn.RejectedNotSupported)
		return
	}
	tp := g.topics.intern(m.TopicName)
	if tp == nil {
		c.sendIDAck(sn.REGACK, 0, m.MsgID, sn.RejectedCongestion)
		return
	}
	c.known.set(tp.id)
	c.sendIDAck(sn.REGACK, tp.id, m.MsgID, sn.Accepted)
}
