package mqttsn

import (
	"fmt"
	"sync/atomic"
)

// DropReason says why the gateway dropped a datagram or a message.
type DropReason int

// Drop reasons.
const (
	// DropMalformed: the datagram breaks the MQTT-SN encoding (bad length field, truncated
	// body, reserved bits) or names a type MQTT-SN 1.2 does not define.
	DropMalformed DropReason = iota
	// DropNotConnected: a message that needs a session came from an address without one.
	DropNotConnected
	// DropUnexpected: the message is not valid in the client's state (a WILLMSG nobody asked
	// for, a PUBACK for no outstanding PUBLISH, a gateway-to-client message sent to the gateway).
	DropUnexpected
	// DropInflightExceeded: a client had more unacknowledged QoS 1/2 PUBLISHes than the gateway
	// keeps state for (MQTT-SN 1.2 allows one); the client retransmits it later.
	DropInflightExceeded
	// DropQueueFull: a message for a client found its queue full (QoS 0 while active, any QoS
	// while the client sleeps).
	DropQueueFull
	// DropTooLarge: a broker message does not fit in one MQTT-SN datagram.
	DropTooLarge
	// DropUnsupported: a QoS -1 PUBLISH with a normal topic id, an unknown topic at QoS -1, a
	// CONNECT with another protocol id.
	DropUnsupported
	// DropClientGone: a broker message arrived for a client that has left.
	DropClientGone
	// DropRejected: the client answered a PUBLISH with a rejection (invalid topic id).
	DropRejected
	numDropReasons
)

var dropNames = [numDropReasons]string{"malformed", "notConnected", "unexpected", "inflightExceeded",
	"queueFull", "tooLarge", "unsupported", "clientGone", "rejectedByClient"}

// String names the reason in Stats.Drops.
func (r DropReason) String() string {
	if r >= 0 && r < numDropReasons {
		return dropNames[r]
	}
	return fmt.Sprintf("reason %d", int(r))
}

// counters are the gateway's live counters.
type counters struct {
	datagramsIn, datagramsOut, bytesIn, bytesOut atomic.Uint64
	publishesIn, publishesOut, brokerFlushes     atomic.Uint64
	connects, rejected, lost, disconnects        atomic.Uint64
	retransmissions, duplicates, willsPublished  atomic.Uint64
	rejectedTopic                                atomic.Uint64
	clients, clientsPeak                         atomic.Int64
	drops                                        [numDropReasons]atomic.Uint64
}

// Stats is a snapshot of the gateway's counters.
type Stats struct {
	// DatagramsIn/Out and BytesIn/Out count UDP datagrams and their payload bytes.
	DatagramsIn, DatagramsOut, BytesIn, BytesOut uint64
	// PublishesIn are PUBLISHes from clients forwarded to the broker (QoS -1 included);
	// PublishesOut are PUBLISHes sent to clients (first transmissions only).
	PublishesIn, PublishesOut uint64
	// BrokerFlushes counts writes of client publishes buffered for a broker connection: the
	// gateway holds them while more datagrams wait on its socket, so PublishesIn / BrokerFlushes
	// is how many publishes reached the broker per write.
	BrokerFlushes uint64
	// Connects are accepted CONNECTs; Rejected were refused (client limit: "rejected:
	// congestion", broker refused, unsupported); Lost clients missed their keep-alive or sleep
	// deadline or stopped acknowledging; Disconnects left with DISCONNECT.
	Connects, Rejected, Lost, Disconnects uint64
	// Retransmissions are PUBLISH, PUBREL and REGISTER sent again after T_retry; Duplicates
	// are retransmitted client messages the gateway recognised (and did not forward twice).
	Retransmissions, Duplicates uint64
	// WillsPublished by the gateway itself (aggregating mode; in transparent mode the broker
	// publishes the will when the gateway drops the client's MQTT connection).
	WillsPublished uint64
	// RejectedTopic counts PUBLISH and SUBSCRIBE answered "rejected: invalid topic ID".
	RejectedTopic uint64
	// Clients is the number of sessions now (connecting, active, asleep); ClientsPeak the most.
	Clients, ClientsPeak int64
	// Drops by DropReason name.
	Drops map[string]uint64
}

func (c *counters) snapshot() Stats {
	s := Stats{
		DatagramsIn: c.datagramsIn.Load(), DatagramsOut: c.datagramsOut.Load(),
		BytesIn: c.bytesIn.Load(), BytesOut: c.bytesOut.Load(),
		PublishesIn: c.publishesIn.Load(), PublishesOut: c.publishesOut.Load(), BrokerFlushes: c.brokerFlushes.Load(),
		Connects: c.connects.Load(), Rejected: c.rejected.Load(), Lost: c.lost.Load(), Disconnects: c.disconnects.Load(),
		Retransmissions: c.retransmissions.Load(), Duplicates: c.duplicates.Load(),
		WillsPublished: c.willsPublished.Load(), RejectedTopic: c.rejectedTopic.Load(),
		Clients: c.clients.Load(), ClientsPeak: c.clientsPeak.Load(),
		Drops: map[string]uint64{},
	}
	for r := range numDropReasons {
		s.Drops[r.String()] = c.drops[r].Load()
	}
	return s
}

func (c *counters) drop(r DropReason) { c.drops[r].Add(1) }

// DropTotal is the sum of all drops.
func (s Stats) DropTotal() uint64 {
	var n uint64
	for _, v := range s.Drops {
		n += v
	}
	return n
}
