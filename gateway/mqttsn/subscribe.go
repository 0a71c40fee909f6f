package mqttsn

import (
	"context"
	"errors"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// subRequest is a SUBSCRIBE or UNSUBSCRIBE on its way to the broker.
type subRequest struct {
	unsubscribe bool
	msgID       uint16
	filter      string
	wildcard    bool
	qos         byte
	topic       *topic // exact filters
	idType      sn.TopicIDType
}

// onSubscribe handles SUBSCRIBE and UNSUBSCRIBE: the broker round trip runs on its own
// goroutine, one per client at a time; a retransmitted request is answered from the last answer.
func (c *client) onSubscribe(m *sn.Subscribe) {
	g := c.g
	unsub := m.T == sn.UNSUBSCRIBE
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stActive {
		g.st.drop(DropUnexpected)
		return
	}
	c.activity++
	if c.ctlBusy {
		if m.MsgID == c.ctlMsgID {
			g.st.duplicates.Add(1)
		} else {
			g.st.drop(DropInflightExceeded)
		}
		return
	}
	if m.MsgID == c.ctlMsgID && c.ctlAnswer != nil && sn.MsgType(c.ctlAnswer[1]) == answerType(unsub) {
		g.st.duplicates.Add(1)
		g.send(c.addr, c.ctlAnswer)
		return
	}
	r := subRequest{unsubscribe: unsub, msgID: m.MsgID, idType: m.Flags.TopicIDType()}
	rc := sn.Accepted
	switch r.idType {
	case sn.TopicNormal:
		if !validFilter(m.TopicName) {
			rc = sn.RejectedNotSupported
			break
		}
		r.filter = string(m.TopicName)
		r.wildcard = hasWildcard(m.TopicName)
		if !r.wildcard {
			if r.topic = g.topics.intern(m.TopicName); r.topic == nil {
				rc = sn.RejectedCongestion
			}
		}
	case sn.TopicPredefined:
		if r.topic = g.topics.predefined(m.TopicID); r.topic == nil {
			rc = sn.RejectedInvalidTopicID
		}
	case sn.TopicShort:
		if r.topic = g.topics.internShort(m.TopicID); r.topic == nil {
			rc = sn.RejectedCongestion
		}
	default:
		rc = sn.RejectedNotSupported
	}
	if r.topic != nil {
		r.filter = r.topic.name
	}
	q := m.Flags.QoS()
	if !unsub && q < 0 {
		rc = sn.RejectedNotSupported
	}
	r.qos = byte(max(0, q))
	if !unsub && rc == sn.Accepted && len(c.subs) >= g.cfg.MaxSubscriptions && c.findSub(r.filter) < 0 {
		rc = sn.RejectedCongestion
	}
	if rc != sn.Accepted {
		if rc == sn.RejectedInvalidTopicID {
			g.st.rejectedTopic.Add(1)
		}
		c.answerLocked(r, 0, rc)
		return
	}
	c.ctlBusy, c.ctlMsgID, c.ctlAnswer = true, m.MsgID, nil
	g.wg.Add(1)
	go g.subscribe(c, r)
}

func answerType(unsub bool) sn.MsgType {
	if unsub {
		return sn.UNSUBACK
	}
	return sn.SUBACK
}

func (g *Gateway) subscribe(c *client, r subRequest) {
	defer g.wg.Done()
	ctx, cancel := context.WithTimeout(g.ctx, g.cfg.BrokerTimeout)
	defer cancel()
	var granted byte
	var err error
	if r.unsubscribe {
		err = g.up.unsubscribe(ctx, c, r.filter)
	} else {
		granted, err = g.up.subscribe(ctx, c, r.filter, r.qos)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stGone {
		if err == nil && !r.unsubscribe {
			g.wg.Add(1)
			go func() { // the client left meanwhile: undo
				defer g.wg.Done()
				ctx, cancel := context.WithTimeout(g.ctx, g.cfg.BrokerTimeout)
				defer cancel()
				_ = g.up.unsubscribe(ctx, c, r.filter)
			}()
		}
		return
	}
	c.ctlBusy = false
	rc := sn.Accepted
	if err != nil {
		g.o.Log("mqtt-sn gateway: client %s: %v", c.id, err)
		rc = sn.RejectedCongestion
		if errors.Is(err, errRefused) {
			rc = sn.RejectedNotSupported
		}
	}
	if rc == sn.Accepted {
		if r.unsubscribe {
			if i := c.findSub(r.filter); i >= 0 {
				s := c.subs[i]
				c.subs = append(c.subs[:i], c.subs[i+1:]...)
				if s.topic != nil {
					c.pre.clear(s.topic.id)
				}
				g.up.detach(c, s)
			}
		} else {
			s := clientSub{filter: r.filter, qos: granted, wildcard: r.wildcard, topic: r.topic}
			if i := c.findSub(r.filter); i >= 0 {
				c.subs[i] = s
			} else {
				c.subs = append(c.subs, s)
			}
			switch {
			case r.idType == sn.TopicPredefined:
				c.pre.set(r.topic.id)
			case r.topic != nil:
				c.known.set(r.topic.id)
			}
			g.up.attach(c, s)
		}
	}
	c.answerLocked(r, granted, rc)
}

// answerLocked sends SUBACK or UNSUBACK and keeps it for a retransmitted request.
func (c *client) answerLocked(r subRequest, granted byte, rc sn.ReturnCode) {
	if r.unsubscribe {
		c.ctlAnswer = sn.AppendAck(c.ctlAnswer[:0], sn.UNSUBACK, r.msgID)
	} else {
		var id uint16 // none for wildcard filters and short names (MQTT-SN 1.2 §5.4.16)
		if rc == sn.Accepted && r.topic != nil && r.idType != sn.TopicShort {
			if _, short := r.topic.shortID(); !short {
				id = r.topic.id
			}
		}
		c.ctlAnswer, _ = (&sn.Suback{Flags: sn.Flags(0).WithQoS(int8(granted)), TopicID: id, MsgID: r.msgID, ReturnCode: rc}).Append(c.ctlAnswer[:0])
	}
	c.ctlMsgID = r.msgID
	c.g.send(c.addr, c.ctlAnswer)
}

func (c *client) findSub(filter string) int {
	for i := range c.subs {
		if c.subs[i].filter == filter {
			return i
		}
	}
	return -1
}
