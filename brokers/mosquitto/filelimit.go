package mosquitto

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// raiseFileLimit gives the broker process pid a soft open-files limit equal to its hard one.
//
// Go raises its own soft RLIMIT_NOFILE to the hard limit at start-up but starts children with
// the soft limit the shell gave it, 1024 on most systems. Mosquitto never raises it: with 1,024
// descriptors its accept() fails with EMFILE from about the 1,000th client on, later clients
// wait in its accept queue (listen backlog 100, fixed in Mosquitto's net.c) until their dial times
// out, and the ones it did accept are reset. Mosquitto opens no client socket before it is
// ready, so raising the limit right after it started is in time.
func raiseFileLimit(pid int) error {
	var lim unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &lim); err != nil {
		return fmt.Errorf("read the broker's open-files limit: %w", err)
	}
	if lim.Cur >= lim.Max {
		return nil
	}
	lim.Cur = lim.Max
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		return fmt.Errorf("raise the broker's open-files limit to %d: %w", lim.Max, err)
	}
	return nil
}
