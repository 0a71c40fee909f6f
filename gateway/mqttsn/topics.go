package mqttsn

import (
	"strconv"
	"sync"
	"sync/atomic"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// topicTable maps topic names to the gateway's topic ids. Ids are global: a name has the same id
// for every client, so a client's normal topic id is an index into one array, and the ids never
// come from a random draw. Predefined topics keep their configured ids; names registered later
// get the next free id above them; short (two-character) names get an entry too, reached through
// a 65536-entry index by their two bytes, though on the wire they travel as the characters.
// Entries are never removed (the table is bounded by MaxTopics), so readers index it without a
// lock through an atomically published slice.
type topicTable struct {
	mu      sync.Mutex // serialises additions
	entries atomic.Pointer[[]*topic]
	byName  map[string]uint16                    // under mu; also read under mu only (not on the hot path)
	short   atomic.Pointer[[65536]atomic.Uint32] // allocated on the first short name
	next    uint16                               // next id for a registered name
	max     int                                  // most entries

	// fast path for the benchmark's topics: prefix + decimal index i has id i+1 when the
	// predefined topics are the default ones.
	prefix    string
	prefixMax int // topics covered by the prefix rule (0: none)

	maxPredefined uint16
}

// topic is one table entry.
type topic struct {
	id         uint16
	name       string
	predefined bool
	// subs are the exact (non-wildcard) subscriptions of aggregating mode: copy on write, read
	// without a lock by the broker connection delivering a message.
	subs atomic.Pointer[[]subRef]
}

// subRef is one client's exact subscription to a topic (aggregating mode).
type subRef struct {
	c   *client
	qos byte
}

func newTopicTable(predefined map[uint16]string, maxTopics int, prefix string, prefixCount int) *topicTable {
	t := &topicTable{byName: map[string]uint16{}, max: maxTopics}
	var top uint16
	for id := range predefined {
		top = max(top, id)
	}
	entries := make([]*topic, int(top)+1)
	for id, name := range predefined {
		if id == 0 {
			continue
		}
		entries[id] = &topic{id: id, name: name, predefined: true}
		t.byName[name] = id
	}
	t.entries.Store(&entries)
	t.maxPredefined = top
	t.next = top + 1
	// The prefix rule is exact only when every benchmark topic is predefined with id i+1.
	ok := prefixCount > 0 && prefixCount < 0xFFFF
	for i := 0; ok && i < prefixCount; i++ {
		ok = predefined[uint16(i+1)] == prefix+strconv.Itoa(i)
	}
	if ok {
		t.prefix, t.prefixMax = prefix, prefixCount
	}
	return t
}

// get returns the entry of id, or nil.
func (t *topicTable) get(id uint16) *topic {
	e := *t.entries.Load()
	if int(id) < len(e) {
		return e[id]
	}
	return nil
}

// predefined returns the predefined topic of id, or nil.
func (t *topicTable) predefined(id uint16) *topic {
	if tp := t.get(id); tp != nil && tp.predefined {
		return tp
	}
	return nil
}

// lookup finds the entry of a topic name without allocating or taking a lock on the hot path:
// a two-character name through the short index, a benchmark topic by parsing its index, other
// names through the map.
func (t *topicTable) lookup(name []byte) *topic {
	if len(name) == 2 {
		if idx := t.short.Load(); idx != nil {
			if id := idx[uint16(name[0])<<8|uint16(name[1])].Load(); id != 0 {
				return t.get(uint16(id))
			}
		}
	}
	if t.prefixMax > 0 && len(name) > len(t.prefix) && string(name[:len(t.prefix)]) == t.prefix {
		if i, ok := atoiSmall(name[len(t.prefix):]); ok && i < t.prefixMax {
			if tp := t.get(uint16(i + 1)); tp != nil && tp.name == string(name) {
				return tp
			}
		}
	}
	t.mu.Lock()
	id, ok := t.byName[string(name)]
	t.mu.Unlock()
	if ok {
		return t.get(id)
	}
	return nil
}

// atoiSmall parses a canonical non-negative decimal (no sign, no leading zero) below 10⁶.
func atoiSmall(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 6 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// intern returns the entry of name, adding it when new. It returns nil when the table is full.
func (t *topicTable) intern(name []byte) *topic {
	if tp := t.lookup(name); tp != nil {
		return tp
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.byName[string(name)]; ok {
		return t.get(id)
	}
	old := *t.entries.Load()
	if len(t.byName) >= t.max || t.next == 0 || int(t.next) >= 0xFFFF {
		return nil
	}
	id := t.next
	t.next++
	tp := &topic{id: id, name: string(name)}
	// Readers hold older slice headers that end before id, so growing in place into spare
	// capacity is safe; only a full slice is copied (doubling, so adding n names costs O(n)).
	var entries []*topic
	if cap(old) > int(id) {
		entries = old[:int(id)+1]
	} else {
		entries = make([]*topic, int(id)+1, 2*(int(id)+1))
		copy(entries, old)
	}
	entries[id] = tp
	t.byName[tp.name] = id
	t.entries.Store(&entries)
	if len(name) == 2 {
		idx := t.short.Load()
		if idx == nil {
			idx = new([65536]atomic.Uint32)
			t.short.Store(idx)
		}
		idx[uint16(name[0])<<8|uint16(name[1])].Store(uint32(id))
	}
	return tp
}

// internShort returns the entry of a short topic id.
func (t *topicTable) internShort(id uint16) *topic {
	n := sn.ShortTopicIDName(id)
	return t.intern(n[:])
}

// shortID reports whether a topic travels as a short topic name, and its id field.
func (tp *topic) shortID() (uint16, bool) {
	if len(tp.name) == 2 {
		return uint16(tp.name[0])<<8 | uint16(tp.name[1]), true
	}
	return 0, false
}
