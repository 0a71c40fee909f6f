// Runs aedes (npm) on a TCP port with the API aedes documents (docs/Examples.md, "Simple plain
// MQTT server"): Aedes.createBroker() and node:net's createServer(aedes.handle).
//
//   node server.mjs [host] [port]     (default 127.0.0.1 0: a free loopback port)
//
// Prints "listening HOST:PORT" on stdout once it accepts connections; every client error on
// stderr. It exits when its standard input closes, so a test that dies does not leave it running.
import { createServer } from 'node:net'
import { Aedes } from 'aedes'

const host = process.argv[2] ?? '127.0.0.1'
const port = Number(process.argv[3] ?? 0)

const aedes = await Aedes.createBroker()
aedes.on('clientError', (client, err) => {
  console.error(`aedes: client ${client?.id ?? '?'} error: ${err.message}`)
})
aedes.on('connectionError', (client, err) => {
  console.error(`aedes: connection error: ${err.message}`)
})
const server = createServer(aedes.handle)
server.listen(port, host, () => {
  const a = server.address()
  console.log(`listening ${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port} aedes ${aedes.version}`)
})
process.stdin.resume()
process.stdin.on('end', () => {
  server.close()
  aedes.close(() => process.exit(0))
})
