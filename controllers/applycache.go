package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// applyCache remembers what the operator applied, so that a reconcile pass where nothing changed
// writes nothing. Model: cluster-api's internal/util/ssa/cache.go, which remembers applies that
// made no difference. Every pass computes each object's desired state; the apply is skipped when
// the same desired state was applied before and the object has not changed since:
//
//   - for the kinds the operator watches (ConfigMap, Service, Deployment, Job), "not changed"
//     means the cached object's resourceVersion is the one seen after the last apply — a change
//     by anyone (a status update included) makes the next pass apply once more;
//   - for the others (ServiceAccount, Chaos Mesh and Strimzi objects), which the operator does
//     not watch, the apply is repeated once a minute, so drift is still corrected;
//   - objects created once (Secrets: keys and certificates) are not written again once they exist.
//
// Before this, every 1 s (200 ms in the tests) pass re-applied every object: one benchmark of
// 6.7 s made 218 writes (TestAPIRequestsPerBenchmark), now 23 (docs/operator.md).
type applyCache struct {
	mu      sync.Mutex
	applied map[string]appliedState
	created map[string]bool
}

type appliedState struct {
	hash [sha256.Size]byte
	rv   string    // resourceVersion seen in the cache after the apply ("": not seen yet)
	at   time.Time // when it was applied
}

// reassertEvery is how often an object the operator does not watch is applied again.
const reassertEvery = time.Minute

// watchedKinds are read from the manager's cache (setupWithManager watches them).
var watchedKinds = map[schema.GroupVersionKind]func() client.Object{
	corev1.SchemeGroupVersion.WithKind("ConfigMap"):  func() client.Object { return &corev1.ConfigMap{} },
	corev1.SchemeGroupVersion.WithKind("Service"):    func() client.Object { return &corev1.Service{} },
	appsv1.SchemeGroupVersion.WithKind("Deployment"): func() client.Object { return &appsv1.Deployment{} },
	batchv1.SchemeGroupVersion.WithKind("Job"):       func() client.Object { return &batchv1.Job{} },
}

func cacheKey(gvk schema.GroupVersionKind, ns, name string) string {
	return gvk.String() + "/" + ns + "/" + name
}

// unchanged reports whether applying obj (its desired state as a map) would change nothing.
func (c *applyCache) unchanged(ctx context.Context, reader client.Reader, gvk schema.GroupVersionKind, ns, name string, desired map[string]any, now time.Time) (bool, [sha256.Size]byte) {
	data, err := json.Marshal(desired)
	if err != nil {
		return false, [sha256.Size]byte{}
	}
	hash := sha256.Sum256(data)
	key := cacheKey(gvk, ns, name)
	c.mu.Lock()
	prev, ok := c.applied[key]
	c.mu.Unlock()
	if !ok || prev.hash != hash {
		return false, hash
	}
	newObj, watched := watchedKinds[gvk]
	if !watched {
		return now.Sub(prev.at) < reassertEvery, hash
	}
	cur := newObj()
	if err := reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cur); err != nil {
		return false, hash
	}
	rv := cur.GetResourceVersion()
	if prev.rv == "" { // the first look after the apply: what the cache shows now is ours
		c.mu.Lock()
		prev.rv = rv
		c.applied[key] = prev
		c.mu.Unlock()
		return true, hash
	}
	return rv == prev.rv, hash
}

// remember records an apply of the desired state with hash.
func (c *applyCache) remember(gvk schema.GroupVersionKind, ns, name string, hash [sha256.Size]byte, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.applied == nil {
		c.applied = map[string]appliedState{}
	}
	if len(c.applied) > 10_000 { // a long-lived operator: forget what was applied long ago
		for k, a := range c.applied {
			if now.Sub(a.at) > 24*time.Hour {
				delete(c.applied, k)
			}
		}
	}
	c.applied[cacheKey(gvk, ns, name)] = appliedState{hash: hash, at: now}
}

// exists reports whether a create-once object was created (or found) before; markExists records it.
func (c *applyCache) exists(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.created[key]
}

func (c *applyCache) markExists(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.created == nil {
		c.created = map[string]bool{}
	}
	c.created[key] = true
}
