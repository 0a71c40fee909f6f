package loadgen

// trackWindow is how far ahead of the oldest missing message a subscriber remembers which
// sequence numbers of a publisher it has seen. A message that arrives more than trackWindow
// sequence numbers late is counted as a duplicate (over TCP, where a publisher's messages
// arrive in order, this cannot happen).
const trackWindow = 4096

// tracker follows one publisher's sequence numbers at one subscriber: duplicates, reordering.
type tracker struct {
	base    uint32 // every sequence number below base has been seen (or given up on)
	maxSeen uint32
	seenAny bool
	bits    [trackWindow / 64]uint64 // seen flags for [base, base+trackWindow), indexed seq mod trackWindow
}

func (t *tracker) bit(seq uint32) (word int, mask uint64) {
	i := seq % trackWindow
	return int(i / 64), uint64(1) << (i % 64)
}

// observe records seq and reports whether it was seen before and whether it arrived after a
// later message of the same publisher.
func (t *tracker) observe(seq uint32) (dup, outOfOrder bool) {
	if seq < t.base {
		return true, false
	}
	if seq >= t.base+trackWindow {
		newBase := seq - trackWindow + 1
		if newBase-t.base >= trackWindow {
			t.bits = [trackWindow / 64]uint64{}
		} else {
			for s := t.base; s < newBase; s++ {
				w, m := t.bit(s)
				t.bits[w] &^= m
			}
		}
		t.base = newBase
	}
	w, m := t.bit(seq)
	if t.bits[w]&m != 0 {
		return true, false
	}
	t.bits[w] |= m
	outOfOrder = t.seenAny && seq < t.maxSeen
	if !t.seenAny || seq > t.maxSeen {
		t.maxSeen = seq
	}
	t.seenAny = true
	for {
		w, m := t.bit(t.base)
		if t.bits[w]&m == 0 {
			break
		}
		t.bits[w] &^= m
		t.base++
	}
	return false, outOfOrder
}
