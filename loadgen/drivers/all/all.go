// Package all registers every protocol driver; import it for its side effect.
package all

import (
	_ "github.com/msgbench/msgbench/loadgen/drivers/http"     // http
	_ "github.com/msgbench/msgbench/loadgen/drivers/kafka"    // kafka
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqtt"     // mqtt
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqttquic" // mqtt-quic
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqttsn"   // mqtt-sn
)
