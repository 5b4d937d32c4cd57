// A free TCP port on loopback, for a process the test starts that must be told its port (nginx, a
// container on the host's network).
import net, { type AddressInfo } from 'node:net';

export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
