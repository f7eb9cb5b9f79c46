/**
 * Baseline: a bare uWebSockets.js server that answers each benchmarked path with the status, headers and body the
 * app answered it with (captured once by the parent and passed in BENCH_BARE_SPEC), with no auth, limits or
 * metering. Same host, same free-port listen, same runtime and loader as serve-app.ts.
 * Prints {"port"} on stdout when ready.
 */
import uWS from 'uWebSockets.js';
import { announce, stopWith } from './lifecycle.js';

export interface BareRoute {
  path: string;
  /** Full status line value, e.g. "200 OK". */
  status: string;
  /** In the app's order and spelling; without the ones uWS writes itself (Date, uWebSockets, Content-Length). */
  headers: [string, string][];
  bodyBase64: string;
  /** Answered only to a request with this If-None-Match (a 304 case beside the 200 case of the same path). */
  ifNoneMatch?: string;
}

const spec = JSON.parse(process.env.BENCH_BARE_SPEC ?? 'null') as BareRoute[] | null;
if (!Array.isArray(spec) || spec.length === 0) throw new Error('BENCH_BARE_SPEC is missing');

const app = uWS.App();
for (const path of new Set(spec.map((r) => r.path))) {
  const answers = spec
    .filter((r) => r.path === path)
    .map((r) => ({ ...r, body: Buffer.from(r.bodyBase64, 'base64'), empty: /^(204|304) /.test(r.status) }));
  const plain = answers.find((a) => a.ifNoneMatch === undefined);
  const conditional = answers.filter((a) => a.ifNoneMatch !== undefined);
  app.get(path, (res, req) => {
    let r = plain;
    if (conditional.length) {
      const inm = req.getHeader('if-none-match');
      r = conditional.find((a) => a.ifNoneMatch === inm) ?? plain;
    }
    if (!r) return void res.writeStatus('404 Not Found').end();
    res.writeStatus(r.status);
    for (const [k, v] of r.headers) res.writeHeader(k, v);
    if (r.empty) res.endWithoutBody(0);
    else res.end(r.body);
  });
}
app.any('/*', (res) => void res.writeStatus('404 Not Found').end());

let listenSocket: uWS.us_listen_socket | undefined;
stopWith(() => {
  if (listenSocket) uWS.us_listen_socket_close(listenSocket);
});

app.listen('127.0.0.1', 0, (token) => {
  if (!token) throw new Error('bare server: cannot listen on 127.0.0.1');
  listenSocket = token;
  announce({ port: uWS.us_socket_local_port(token) });
});
