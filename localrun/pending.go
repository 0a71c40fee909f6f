package localrun

import (
	"context"
	"errors"
)

// startKafka starts a local single-node Kafka. (Completed together with the Kafka driver.)
func (r *runner) startKafka(context.Context) error {
	return errors.New("spec.broker.type kafka: a local Kafka is not available in this build")
}
