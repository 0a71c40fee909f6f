package kafka

import (
	"encoding/base64"
	"testing"
)

// TestClusterIDNeverLooksLikeAnOption: kafka-storage format takes "--cluster-id ID"; an id that
// starts with '-' (1 draw in 64 before the fix) made it fail with "expected one argument".
func TestClusterIDNeverLooksLikeAnOption(t *testing.T) {
	for range 10000 {
		id := clusterID()
		if id[0] == '-' {
			t.Fatalf("cluster id %q starts with '-'", id)
		}
		if u, err := base64.RawURLEncoding.DecodeString(id); err != nil || len(u) != 16 {
			t.Fatalf("cluster id %q is not a base64 UUID: %v", id, err)
		}
	}
}
