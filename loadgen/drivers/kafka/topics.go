package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// topicWait bounds how long a new topic may take until every partition has a leader.
const topicWait = 30 * time.Second

// ensureTopic creates topic with spec.kafka.partitions and replicas unless it exists (created
// by another worker, by Strimzi's KafkaTopic, or on an external broker — then its own partition
// count stands), and waits until every partition has a leader.
func (d *driver) ensureTopic(ctx context.Context, cl *kgo.Client, topic string) error {
	if _, ok := d.ensured.Load(topic); ok {
		return nil
	}
	_, err := endOffsets(ctx, cl, topic, d.o.Partitions, d.o.Replicas)
	if err == nil {
		d.ensured.Store(topic, struct{}{})
	}
	return err
}

// endOffsets makes sure topic exists and returns each partition's end offset (the offset the
// next record appended to it will get).
func endOffsets(ctx context.Context, cl *kgo.Client, topic string, partitions, replicas int32) (map[int32]int64, error) {
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, topicWait)
	defer cancel()
	_, err := adm.CreateTopic(ctx, partitions, int16(replicas), nil, topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return nil, fmt.Errorf("create topic %s (%d partitions, %d replicas): %w", topic, partitions, replicas, err)
	}
	created := err == nil
	var last error
	for {
		listed, err := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			out := map[int32]int64{}
			last = nil
			listed.Each(func(o kadm.ListedOffset) {
				if o.Err != nil {
					last = fmt.Errorf("partition %d: %w", o.Partition, o.Err)
					return
				}
				out[o.Partition] = o.Offset
			})
			// A topic just created may list fewer partitions until the controller assigned them all.
			if last == nil && len(out) > 0 && (!created || len(out) == int(partitions)) {
				return out, nil
			}
			if last == nil {
				last = fmt.Errorf("%d of %d partitions have a leader", len(out), partitions)
			}
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("topic %s not ready within %s: %w", topic, topicWait, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
