package main

import "os"

// Tests that run `msgbench run` inside this test binary (msgbench(t, "run", …)) start worker
// processes from this very executable (os.Executable) as `<test binary> loadgen …`. A test
// binary is never started with "loadgen" as its first argument otherwise, so it then acts as
// msgbench, like the real binary would.
func init() {
	if len(os.Args) > 1 && os.Args[1] == "loadgen" {
		main()
		os.Exit(0)
	}
}
