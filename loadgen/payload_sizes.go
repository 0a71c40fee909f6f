package loadgen

import (
	"math/rand/v2"

	"github.com/msgbench/msgbench/plan"
)

// payloadStream is a publisher's messages when its device group varies them
// (spec.groups[].publish.payload): each message's size drawn from the group's distribution with
// the publisher's own generator, seeded by its id, so that every run sends the same sizes; or
// its content rendered from the group's template for this device. Nothing is allocated per
// message.
type payloadStream struct {
	size *plan.SizeDistribution
	rng  *rand.Rand
	tmpl *plan.Template // bound to the device: {counter} and {timestamp} left
	// buf holds the messages: MaxBytes of random bytes that each size takes its prefix of, or a
	// template's header and room for its longest rendering.
	buf []byte
	// epochNanos is the engine's epoch in Unix nanoseconds: a message's {timestamp} is its
	// intended send time (engine time) on the wall clock.
	epochNanos int64
}

// sizeSeedStream is the PCG stream a publisher's size generator draws from, another than its
// payload's bytes' (fillPayload).
const sizeSeedStream = 0x73697a6573

// newPayloadStream is the message stream of publisher id (its id in message headers; index its
// place in its group, clientID its client id) of group g, nil when g's messages are all
// g.PayloadBytes of random bytes.
func newPayloadStream(g *plan.Group, id uint32, index int, clientID string, epochNanos int64) *payloadStream {
	pl := g.Payload
	if pl == nil {
		return nil
	}
	s := &payloadStream{epochNanos: epochNanos}
	if pl.Size != nil {
		s.size = pl.Size
		s.rng = rand.New(rand.NewPCG(uint64(id), sizeSeedStream))
		s.buf = make([]byte, pl.Size.Max)
		fillPayload(s.buf, int(id))
		return s
	}
	s.tmpl = pl.Template.Bind(clientID, index)
	// MaxLen of the bound template counts this device's own id, however long its run id.
	s.buf = make([]byte, HeaderSize, HeaderSize+s.tmpl.MaxLen())
	return s
}

// message is message k's payload, intended at engine time intended, its header still to be
// written (putHeader). The slice is s's buffer: valid until the next call.
func (s *payloadStream) message(k, intended int64) []byte {
	if s.size != nil {
		return s.buf[:s.size.NextSize(s.rng)]
	}
	s.buf = s.tmpl.Append(s.buf[:HeaderSize], "", 0, uint32(k), (s.epochNanos+intended)/1e6)
	return s.buf
}
