// Package all registers every gateway mode; import it for its side effect.
package all

import (
	_ "github.com/msgbench/msgbench/gateway/http"   // http
	_ "github.com/msgbench/msgbench/gateway/mqttsn" // mqtt-sn
	_ "github.com/msgbench/msgbench/gateway/quic"   // quic
)
