// The generated reference pages match the code they describe: docs/cli.md is the --help of every command and
// docs/configuration.md the config schema with its defaults. Both are rendered here in memory with the functions of
// scripts/gen-reference.mjs and compared with the committed pages.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeProgram } from '../../src/cli/main.js';
import { envLayer } from '../../src/config/load.js';
import { publishedSchema } from '../../src/ops/config-check.js';
import { cli, cliProcess } from '../helpers/cli.js';

const ROOT = join(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'gen-reference.mjs');
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');
const stale = (page: string) => `${page} is out of date with the code: run \`npm run docs:reference\` and commit it`;
const quiet = { out: () => {}, err: () => {}, env: {} };

/** The script's render functions (plain JavaScript, so imported by a path held in a variable). */
let gen: { renderCli: (program: unknown) => string; renderConfig: (schema: unknown) => string };
beforeAll(async () => {
  gen = await import(pathToFileURL(SCRIPT).href);
});

/** Each `## svcmaps ...` section of docs/cli.md and the help text in its code block. */
function cliSections(page: string): Map<string, string> {
  const sections = new Map<string, string>();
  for (const m of page.matchAll(/^## (svcmaps(?: [\w-]+)*)\n\n```text\n([\s\S]*?)\n```$/gm)) sections.set(m[1]!, m[2]!);
  return sections;
}

/** Dotted path of every key of the schema that is not an object, with its schema. */
function leaves(schema: any, path: string[] = []): Array<[string[], any]> {
  return Object.entries(schema.properties ?? {}).flatMap(([k, s]: [string, any]) =>
    s.properties ? leaves(s, [...path, k]) : [[[...path, k], s] as [string[], any]],
  );
}

describe('docs/cli.md', () => {
  it('is the --help of every command, as scripts/gen-reference.mjs renders it', async () => {
    const expected = gen.renderCli(await makeProgram(quiet));
    expect(read('docs/cli.md'), stale('docs/cli.md')).toBe(expected);
  });

  it('has a section for every command and sub-command, each what `svcmaps ... --help` prints', async () => {
    const sections = cliSections(read('docs/cli.md'));
    const walk = (c: any, path: string[]): string[][] => [
      path,
      ...c.commands.flatMap((s: any) => walk(s, [...path, s.name()])),
    ];
    const commands = walk(await makeProgram(quiet), ['svcmaps']);
    expect([...sections.keys()]).toEqual(commands.map((p) => p.join(' ')));
    for (const name of ['svcmaps keys create', 'svcmaps tiles export', 'svcmaps cluster migrate'])
      expect(sections.has(name), name).toBe(true);
    // The CLI as run loads only the verb it is given; its --help must be the page's (wrapping aside: the page is
    // laid out at a fixed width, a terminal at its own).
    const words = (s: string) => s.replace(/\s+/g, ' ').trim();
    for (const path of commands) {
      const r = await cli(...path.slice(1), '--help');
      expect(r.code, path.join(' ')).toBe(0);
      expect(words(sections.get(path.join(' '))!), stale('docs/cli.md')).toBe(words(r.out));
    }
  });
});

describe('docs/configuration.md', () => {
  it('is the config schema with its defaults, as scripts/gen-reference.mjs renders it', () => {
    expect(read('docs/configuration.md'), stale('docs/configuration.md')).toBe(gen.renderConfig(publishedSchema()));
  });

  it('describes every key of the schema', () => {
    const undescribed = leaves(publishedSchema())
      .filter(([, s]) => typeof s.description !== 'string' || s.description.length < 10)
      .map(([p]) => p.join('.'));
    expect(undescribed, 'add a description to these keys in src/config/schema.ts').toEqual([]);
  });

  it('names, for every key, environment variables that set that key', () => {
    const rows = [...read('docs/configuration.md').matchAll(/^\| `([^`]+)` \|.*$/gm)];
    const keys = leaves(publishedSchema()).map(([p]) => p.join('.'));
    expect(rows.map((r) => r[1]).sort()).toEqual(keys.sort());
    for (const [row, key] of rows.map((r) => [r[0], r[1]!] as const)) {
      if (key === '$schema') continue;
      // descriptions are plain text: the only SVCMAPS_* code spans of a row are its environment column
      const names = [...row.matchAll(/`(SVCMAPS_[A-Z0-9_]+)`/g)].map((m) => m[1]!);
      expect(names.length, key).toBeGreaterThan(0);
      for (const name of names) {
        let node: any = envLayer({ [name]: 'x' });
        for (const part of key.split('.')) node = node?.[part];
        expect(node, `${name} should set ${key}`).toBe('x');
      }
    }
  });
});

describe('scripts/gen-reference.mjs', () => {
  it('--check finds both pages current (the script reads the sources through tsx)', () => {
    const r = spawnSync(process.execPath, [SCRIPT, '--check'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  });
});

describe('svcmaps --version', () => {
  const version = (JSON.parse(read('package.json')) as { version: string }).version;

  it("prints package.json's version", async () => {
    const r = await cli('--version');
    expect(r.code).toBe(0);
    expect(r.out.trim()).toBe(version);
  });

  it("prints package.json's version when run as a process", () => {
    const r = cliProcess('--version');
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim()).toBe(version);
  });
});
