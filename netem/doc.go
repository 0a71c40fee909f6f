// Package netem describes the emulated network between msgbench's devices (the load-generating
// clients) and the broker or gateway, and applies it.
//
// A MessagingBenchmark names a preset profile (nb-iot, lte, 5g-sa, satellite, …) and may override
// any of its numbers, for both directions or for one. [Resolve] turns that spec into a [Link]:
// exact per-direction parameters (delays as time.Duration, probabilities as parts per billion,
// rates in bits per second). Two back ends apply a Link:
//
//   - On Kubernetes, [NetworkChaos] builds Chaos Mesh NetworkChaos objects (tc netem and tbf on
//     the pods' egress) and [ChaosInjection] reads back whether Chaos Mesh managed to inject them.
//   - Locally, package netem/emulator forwards every packet between two network namespaces in
//     user space and applies the same numbers, because many kernels (these CI machines among
//     them) have no sch_netem.
//
// Every preset carries its source; docs/network-profiles.md explains each number.
package netem
