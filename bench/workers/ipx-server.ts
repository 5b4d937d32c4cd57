// IPX (npm `ipx`, the image server Nuxt Image runs by default, on its own sharp) as a bench peer
// (bench/thumbs.ts): its defaults, an HTTP source that may reach the loopback origin, on 127.0.0.1
// at any free port. A long-running child: it prints its URL and serves until it is stopped.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createIPX, createIPXNodeServer, ipxHttpStorage } from 'ipx';

// Every source is a URL: the HTTP storage serves as IPX's (required) storage too.
const http = ipxHttpStorage({ domains: ['127.0.0.1'] });
const ipx = createIPX({ storage: http, httpStorage: http });
const server = createServer(createIPXNodeServer(ipx));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`ipx: listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
