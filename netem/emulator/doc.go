// Package emulator emulates a network link in user space, packet by packet, for local runs.
//
// A [Link] joins two network namespaces, the device side (where the load-generating clients
// live) and the server side (broker, gateway), through one TUN device in each. A forwarder in
// this process reads every IP packet one side sends and writes it to the other after applying
// that direction's netem.Impairment: loss, duplication, a flipped bit, the rate of a serial link
// with a bounded queue, then delay with jitter (a normal distribution, packets kept in order) or,
// for the reordered fraction, no delay at all. The kernels on both sides run real TCP, UDP and
// QUIC over it, so a lost packet is really retransmitted and an MTU is really an MTU.
//
// It needs no kernel support beyond network namespaces and TUN (many kernels, CI runners among
// them, lack sch_netem), but it needs CAP_NET_ADMIN and CAP_SYS_ADMIN: see [CheckPrivileges].
//
// Go code reaches a side through its [Namespace]: DialContext, Listen and ListenPacket create
// sockets inside it (a socket keeps the namespace it was created in), Do runs any function there,
// Start starts a child process there. Nothing outlives the process: the namespaces are held only
// by file descriptors and the processes in them, the TUN devices vanish with their descriptors,
// Close kills what still runs inside, and Start kills what a crashed msgbench left behind.
package emulator
