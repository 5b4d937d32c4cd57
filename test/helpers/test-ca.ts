// A certificate authority made at test time with the `openssl` command, and a server certificate
// it signs for a host name: a client given the CA (NODE_EXTRA_CA_CERTS) trusts a loopback TLS
// server under that name. Nothing is kept: the files live in a temporary directory.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  /** The CA's certificate file (PEM), for NODE_EXTRA_CA_CERTS. */
  caPath: string;
  /** The server's key and certificate (PEM), for tls.createSecureContext. */
  key: string;
  cert: string;
  /** Removes the files. */
  remove(): void;
}

export function makeTestCertificate(hostName: string): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'matte-ca-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=matte test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  openssl('req', ...ec, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', `/CN=${hostName}`);
  writeFileSync(file('server.ext'), `subjectAltName=DNS:${hostName}\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`);
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '2', '-extfile', file('server.ext'));
  return {
    caPath: file('ca.pem'),
    key: readFileSync(file('server.key'), 'utf8'),
    cert: readFileSync(file('server.pem'), 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
