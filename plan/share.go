package plan

// Share is one worker's share of a group's clients. Topics are dealt to workers round-robin,
// and each topic's publishers and subscribers live with it, so a message's send and receive
// times come from one process's monotonic clock.
type Share struct {
	Worker, Workers int
	// Topics owned by this worker.
	Topics []int
	// Publishers and Subscribers of those topics, by index in the group.
	Publishers  []Client
	Subscribers []Client
	// TotalPublishers and TotalTopics over all workers.
	TotalPublishers, TotalTopics int
}

// Client is one client of a share.
type Client struct {
	Index int // index among the group's publishers (or subscribers)
	Topic int
	// Quota is how many messages this publisher sends when the group's load is a message count
	// (0: until the window ends).
	Quota int64
}

// Share deals the group's clients to worker (0-based) of workers: topic t to worker t mod
// workers, publisher and subscriber i to topic i mod topics, a message count split evenly over
// the publishers (the first ones take the remainder).
func (g *Group) Share(worker, workers int) Share {
	T := int(g.Topics)
	P := int(g.Publishers)
	s := Share{Worker: worker, Workers: workers, TotalPublishers: P, TotalTopics: T}
	for t := worker; t < T; t += workers {
		s.Topics = append(s.Topics, t)
	}
	m := g.Load.Messages
	for i := 0; i < P; i++ {
		if (i%T)%workers != worker {
			continue
		}
		var quota int64
		if m > 0 {
			quota = m / int64(P)
			if int64(i) < m%int64(P) {
				quota++
			}
		}
		s.Publishers = append(s.Publishers, Client{Index: i, Topic: i % T, Quota: quota})
	}
	for i := 0; i < int(g.Subscribers); i++ {
		if (i%T)%workers == worker {
			s.Subscribers = append(s.Subscribers, Client{Index: i, Topic: i % T})
		}
	}
	return s
}

// PublishersOn returns how many publishers (over all workers) publish to topic t.
func (s *Share) PublishersOn(t int) int {
	n := s.TotalPublishers / s.TotalTopics
	if t < s.TotalPublishers%s.TotalTopics {
		n++
	}
	return n
}
