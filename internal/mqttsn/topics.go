package mqttsn

import "fmt"

// ShortTopicAlphabet is the 62 characters of msgbench's short topic names, in order.
const ShortTopicAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// MaxShortTopics is how many topics short names cover: 62².
const MaxShortTopics = len(ShortTopicAlphabet) * len(ShortTopicAlphabet)

// ShortTopicName is msgbench's short topic name of benchmark topic i (0 ≤ i < 3844): two
// characters from ShortTopicAlphabet, the first ShortTopicAlphabet[i/62], the second
// ShortTopicAlphabet[i%62], so topic 0 is "00", 61 is "0z", 62 is "10" and 3843 is "zz". The
// gateway and the driver both use it; the MQTT topic at the broker is this two-character name
// (MQTT-SN short names are topic names, so spec.workload.topicPrefix does not apply).
func ShortTopicName(i int) (string, error) {
	if i < 0 || i >= MaxShortTopics {
		return "", fmt.Errorf("topic %d has no short name: short names cover topics 0..%d", i, MaxShortTopics-1)
	}
	n := len(ShortTopicAlphabet)
	return string([]byte{ShortTopicAlphabet[i/n], ShortTopicAlphabet[i%n]}), nil
}

// ShortTopicID is the topic id field of a two-character topic name: first character in the high
// byte.
func ShortTopicID(name string) uint16 { return uint16(name[0])<<8 | uint16(name[1]) }

// ShortTopicIDName is the two-character name of a short topic id.
func ShortTopicIDName(id uint16) [2]byte { return [2]byte{byte(id >> 8), byte(id)} }

// PredefinedTopicID is the predefined topic id of benchmark topic i: i+1 (id 0 is reserved).
func PredefinedTopicID(i int) (uint16, error) {
	if i < 0 || i >= 0xFFFF {
		return 0, fmt.Errorf("topic %d has no predefined id: ids are 1..65535", i)
	}
	return uint16(i + 1), nil
}
