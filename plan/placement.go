package plan

// WorkerSet is one set of load-generator workers of a run: on Kubernetes, one Job. Its workers
// run Groups (nil: every group of the plan, a flat run's or a fleet's whose groups all share
// one set).
type WorkerSet struct {
	// Name tells the sets apart ("" for the shared set, else the group's name), for object
	// names and the pods' label.
	Name string
	// Groups are the names of the device groups the set's workers run, in the plan's order; nil
	// for the shared set of a run whose every group is in it.
	Groups []string
	// Replicas is how many workers the set has: the run's spec.workers.replicas for the shared
	// set, 1 for a group's own.
	Replicas int
	// Network is the link of the set's group when it has one of its own (the set then holds that
	// group alone), nil otherwise.
	Network *Network
}

// Own reports whether the set is a group's own (a group behind its own link, or with a
// placement of its own).
func (s *WorkerSet) Own() bool { return s.Name != "" }

// Linked reports whether the set is a group's own behind the group's own link: a NetworkChaos
// selects its pods.
func (s *WorkerSet) Linked() bool { return s.Network != nil }

// Placement is where a run's groups run on Kubernetes: a flat run, and a fleet whose groups
// share the run's link, in one set (every worker runs every group: Group.Share deals the
// clients); each group with a network of its own in a set of its own, one worker, so that a
// NetworkChaos can select just its pod, and each group with a placement of its own likewise,
// so that its pod is scheduled as it asks; the other groups share one set, first. Chaos Mesh
// shapes a pod's traffic as a whole, so two links cannot share a pod.
func (p *Plan) Placement() []WorkerSet {
	shared := WorkerSet{Replicas: max(1, p.Workers)}
	var own []WorkerSet
	for _, g := range p.Groups {
		if g.Fleet != nil && (g.Network != nil || g.Fleet.Placement != nil) {
			own = append(own, WorkerSet{Name: g.Name, Groups: []string{g.Name}, Replicas: 1, Network: g.Network})
			continue
		}
		shared.Groups = append(shared.Groups, g.Name)
	}
	if len(own) == 0 {
		return []WorkerSet{{Replicas: shared.Replicas}}
	}
	if len(shared.Groups) == 0 {
		return own
	}
	return append([]WorkerSet{shared}, own...)
}

// SetGroups are the plan's groups set s runs.
func (p *Plan) SetGroups(s WorkerSet) []Group {
	if s.Groups == nil {
		return p.Groups
	}
	var out []Group
	for _, g := range p.Groups {
		for _, name := range s.Groups {
			if g.Name == name {
				out = append(out, g)
			}
		}
	}
	return out
}
