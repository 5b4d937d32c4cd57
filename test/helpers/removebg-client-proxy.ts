// Preloaded (--import) into the process that runs remove.bg's client: its JSON calls go through the
// request library, which reads HTTPS_PROXY itself, but its uploads go through form-data's
// https.request, which takes Node's default HTTPS agent. That agent is given the same proxy here,
// so every call the client makes reaches the test's CONNECT proxy and nothing else.
import https from 'node:https';
import { HttpsProxyAgent } from 'https-proxy-agent';

const proxy = process.env.HTTPS_PROXY;
if (!proxy) throw new Error('removebg-client-proxy: HTTPS_PROXY is not set');
https.globalAgent = new HttpsProxyAgent(proxy);
