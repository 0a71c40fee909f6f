package localrun

import (
	"context"
	"errors"
)

// startLink sets up the user-space link emulator. (Completed together with the netem package.)
func (r *runner) startLink(context.Context) error {
	return errors.New("spec.network: network emulation is not available in this build")
}

// startKafka starts a local single-node Kafka. (Completed together with the Kafka driver.)
func (r *runner) startKafka(context.Context) error {
	return errors.New("spec.broker.type kafka: a local Kafka is not available in this build")
}
