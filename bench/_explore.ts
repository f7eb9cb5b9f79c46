import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const dir = mkdtempSync(join(tmpdir(), 'explore-'));
const extra = (process.env.NODE_EXTRA ?? '').split(' ').filter(Boolean);
const child = spawn(process.execPath, [...extra, '--import', 'tsx', '/work/main/bench/serve-app.ts', dir], { cwd: '/work/main', stdio: ['pipe', 'pipe', 'inherit'] });
const line: string = await new Promise((r) => createInterface({ input: child.stdout! }).once('line', r));
const { port, apiKey } = JSON.parse(line);
const tok = ((await (await fetch(`http://127.0.0.1:${port}/maps/v1/tile-token`, { method: 'POST', headers: { 'X-API-Key': apiKey } })).json()) as any).data.token;
const cpu = () => { const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const cases: [string, Record<string, string>][] = [['/livez', {}], ['/maps/v1/autocomplete?q=%20', { 'X-API-Key': apiKey }], [`/maps/v1/sprites/svc.json?t=${tok}`, {}]];
const only = process.env.ONLY ? Number(process.env.ONLY) : -1;
for (const [i, [path, headers]] of cases.entries()) {
  if (only >= 0 && i !== only) continue;
  const c0 = cpu(); const m0 = process.cpuUsage(); const t0 = Date.now();
  const inst = autocannon({ url: `http://127.0.0.1:${port}${path}`, headers, connections: 10, duration: Number(process.env.D ?? 10) });
  const ticks: number[] = []; let last = cpu(); let lm = process.cpuUsage();
  inst.on('tick', ({ counter }: any) => { const c = cpu(); const m = process.cpuUsage(); ticks.push(counter); console.log(`  ${path.slice(0, 30)} ${counter} req/s  server cpu ${((c - last) / 10).toFixed(0)}%  client cpu ${(((m.user - lm.user) + (m.system - lm.system)) / 1e4).toFixed(0)}%`); last = c; lm = m; });
  const r: any = await inst;
  const el = Date.now() - t0; const m1 = process.cpuUsage(m0);
  console.log(`${path.slice(0, 40)}: ${Math.round(r.requests.total / r.duration)} req/s, server ${(cpu() - c0) / el * 100 | 0}% cpu, ${((cpu() - c0) * 1000 / r.requests.total).toFixed(1)} us cpu/req, client ${((m1.user + m1.system) / 1000 / el * 100) | 0}% non2xx ${r.non2xx}`);
}
child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r)); rmSync(dir, { recursive: true, force: true });
