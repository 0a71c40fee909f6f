package loadgen

import "encoding/binary"

// HeaderSize is the size of the header msgbench writes at the start of every payload that has
// room for it: publisher index (4 bytes), sequence number (4), intended send time in
// nanoseconds on the worker's monotonic clock (8). Smaller payloads are counted only.
const HeaderSize = 16

func putHeader(b []byte, publisher, seq uint32, sendNanos int64) {
	binary.BigEndian.PutUint32(b[0:4], publisher)
	binary.BigEndian.PutUint32(b[4:8], seq)
	binary.BigEndian.PutUint64(b[8:16], uint64(sendNanos))
}

func readHeader(b []byte) (publisher, seq uint32, sendNanos int64) {
	return binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8]), int64(binary.BigEndian.Uint64(b[8:16]))
}
