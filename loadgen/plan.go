// Package loadgen is msgbench's load generator: it connects the publishers and subscribers of a
// workload through a protocol driver, publishes on an open- or closed-loop schedule, and turns
// what it observes into a result (results.Result) whose every figure follows
// docs/measurement.md.
package loadgen

import (
	"github.com/msgbench/msgbench/api/v1alpha1"
)

// Plan is one worker's share of a workload. Topics are dealt to workers round-robin, and each
// topic's publishers and subscribers live with it, so a message's send and receive times come
// from one process's monotonic clock.
type Plan struct {
	Worker, Workers int
	// Topics owned by this worker.
	Topics []int
	// Publishers and Subscribers of those topics, by global index.
	Publishers  []ClientPlan
	Subscribers []ClientPlan
	// TotalPublishers and TotalTopics over all workers.
	TotalPublishers, TotalTopics int
}

// ClientPlan is one client.
type ClientPlan struct {
	Index int // global index among publishers (or subscribers)
	Topic int
	// Quota is how many messages this publisher sends with workload.messages (0: until the
	// duration ends).
	Quota int64
}

// NewPlan deals the workload to worker (0-based) of workers.
func NewPlan(w *v1alpha1.WorkloadSpec, worker, workers int) Plan {
	T := int(w.Topics)
	P := int(w.Publishers)
	p := Plan{Worker: worker, Workers: workers, TotalPublishers: P, TotalTopics: T}
	for t := worker; t < T; t += workers {
		p.Topics = append(p.Topics, t)
	}
	for i := 0; i < P; i++ {
		if (i%T)%workers != worker {
			continue
		}
		var quota int64
		if w.Messages > 0 {
			quota = w.Messages / int64(P)
			if int64(i) < w.Messages%int64(P) {
				quota++
			}
		}
		p.Publishers = append(p.Publishers, ClientPlan{Index: i, Topic: i % T, Quota: quota})
	}
	for i := 0; i < int(w.Subscribers); i++ {
		if (i%T)%workers == worker {
			p.Subscribers = append(p.Subscribers, ClientPlan{Index: i, Topic: i % T})
		}
	}
	return p
}

// PublishersOn returns how many publishers (over all workers) publish to topic t.
func (p *Plan) PublishersOn(t int) int {
	n := p.TotalPublishers / p.TotalTopics
	if t < p.TotalPublishers%p.TotalTopics {
		n++
	}
	return n
}
