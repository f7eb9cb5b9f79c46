// Every relative link and every repository path written in README.md and docs/*.md exists: markdown links (with
// their #anchors, which must name a heading of the target page), reference definitions, href/src of inline HTML, and
// paths such as src/app.ts or `node scripts/bundle.mjs` in inline code and in code blocks. Links with a scheme
// (https:, mailto:) are not followed, and absolute paths (/var/lib/svcmaps, /etc/...) are an operator's machine, not
// the repository.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');
/** Top-level folders of the repository: a path in code that starts with one of them names a file of the repository. */
const REPO_DIRS = ['src', 'test', 'scripts', 'deploy', 'docs', 'bench', 'styles', 'bin', 'eslint-rules'];
const REPO_PATH = new RegExp(`^(?:\\./)?(?:${REPO_DIRS.join('|').replace(/-/g, '\\-')})/`);

function pages(): string[] {
  const docs = (dir: string): string[] =>
    existsSync(join(ROOT, dir))
      ? readdirSync(join(ROOT, dir), { withFileTypes: true })
          .flatMap((e) =>
            e.isDirectory() ? docs(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
          )
          .sort()
      : [];
  return ['README.md', ...docs('docs')].map((p) => p.split(sep).join('/'));
}

interface Block {
  /** The block's text, its lines joined. */
  text: string;
  /** Line number (1-based) of the block's first line. */
  line: number;
  fenced: boolean;
}

/** The page cut into fenced code blocks and paragraphs (HTML comments blanked out). */
function blocks(markdown: string): Block[] {
  const lines = markdown.replace(/<!--[\s\S]*?-->/g, (c) => c.replace(/[^\n]/g, ' ')).split('\n');
  const out: Block[] = [];
  let fence: { char: string; length: number; start: number; body: string[] } | undefined;
  let prose: { start: number; body: string[] } | undefined;
  lines.forEach((text, i) => {
    if (fence) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(text);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) {
        out.push({ text: fence.body.join('\n'), line: fence.start, fenced: true });
        fence = undefined;
      } else fence.body.push(text);
      return;
    }
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(text);
    if (open) {
      if (prose) out.push({ text: prose.body.join('\n'), line: prose.start, fenced: false });
      prose = undefined;
      fence = { char: open[1]![0]!, length: open[1]!.length, start: i + 2, body: [] };
      return;
    }
    if (!text.trim()) {
      // a blank line ends a paragraph: no code span or link runs past it
      if (prose) out.push({ text: prose.body.join('\n'), line: prose.start, fenced: false });
      prose = undefined;
      return;
    }
    if (!prose) prose = { start: i + 1, body: [] };
    prose.body.push(text);
  });
  if (fence) out.push({ text: fence.body.join('\n'), line: fence.start, fenced: true });
  if (prose) out.push({ text: prose.body.join('\n'), line: prose.start, fenced: false });
  return out;
}

const lineAt = (b: Block, offset: number) => b.line + (b.text.slice(0, offset).match(/\n/g)?.length ?? 0);
const CODE_SPAN = /(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g;

/** GitHub's anchor of a heading: its text as rendered, lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .split(/(`+[^`]*`+)/)
    .map((part) =>
      part.startsWith('`') ? part.replace(/`/g, '') : part.replace(/[*~]/g, '').replace(/(^|\W)_+|_+(?=\W|$)/g, '$1'),
    )
    .join('')
    .trim();
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map<string, Set<string>>();
/** The anchors a page has: one per heading (repeats numbered -1, -2 ... as GitHub does) and explicit HTML ids. */
function anchorsOf(file: string): Set<string> {
  const known = anchorCache.get(file);
  if (known) return known;
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const add = (s: string) => {
    const n = seen.get(s) ?? 0;
    seen.set(s, n + 1);
    anchors.add(n ? `${s}-${n}` : s);
  };
  for (const b of blocks(readFileSync(file, 'utf8'))) {
    if (b.fenced) continue;
    const lines = b.text.split('\n');
    lines.forEach((text, i) => {
      const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(text);
      if (atx) add(slug(atx[1] ?? ''));
      else if (
        text.trim() &&
        /^ {0,3}(=+|-+)[ \t]*$/.test(lines[i + 1] ?? '') &&
        !/^ {0,3}([-*+]|\d+[.)])\s|^ {0,3}[|>]/.test(text)
      )
        add(slug(text));
      for (const m of text.matchAll(/<a\s[^>]*?(?:name|id)="([^"]+)"/g)) anchors.add(m[1]!);
    });
  }
  anchorCache.set(file, anchors);
  return anchors;
}

/** What is wrong with one link destination written in `page`, or undefined when it resolves. */
function checkLink(page: string, destination: string): string | undefined {
  const dest = destination.replace(/^<(.*)>$/, '$1');
  if (/^[a-z][a-z0-9+.-]*:/i.test(dest) || dest.startsWith('//')) return undefined;
  const hash = dest.indexOf('#');
  const rawPath = (hash < 0 ? dest : dest.slice(0, hash)).replace(/\?.*$/, '');
  const anchor = hash < 0 ? undefined : decodeURIComponent(dest.slice(hash + 1));
  const path = decodeURIComponent(rawPath);
  const target = path
    ? resolve(path.startsWith('/') ? ROOT : dirname(join(ROOT, page)), path.replace(/^\//, ''))
    : join(ROOT, page);
  const shown = relative(ROOT, target).split(sep).join('/');
  if (shown.startsWith('..')) return `link ${destination}: outside the repository`;
  if (!existsSync(target)) return `link ${destination}: ${shown} does not exist`;
  if (!anchor || !target.endsWith('.md') || !statSync(target).isFile()) return undefined;
  const anchors = anchorsOf(target);
  if (anchors.has(anchor) || anchors.has(anchor.toLowerCase())) return undefined;
  return `link ${destination}: ${shown} has no heading with the anchor #${anchor}`;
}

/** What is wrong with a repository path written in code (a glob or placeholder is checked up to where it starts). */
function checkRepoPath(written: string): string | undefined {
  let path = written
    .replace(/^\.\//, '')
    .replace(/(?::\d+)+$/, '')
    .replace(/#.*$/, '')
    .replace(/(\.\.\.|…)$/, '');
  const wild = path.search(/[*?[{<$]/);
  if (wild >= 0) path = path.slice(0, path.lastIndexOf('/', wild) + 1);
  if (existsSync(join(ROOT, path))) return undefined;
  return `path ${written}: does not exist`;
}

/** Words of code that name repository paths: split at spaces and at what surrounds a path in a command or a list. */
function repoPaths(code: string): string[] {
  return code
    .split(/[\s=,;()'"`|]+/)
    .map((w) => w.replace(/^[[(]+|[\]).:]+$/g, ''))
    .filter((w) => REPO_PATH.test(w));
}

/** Every problem of one page, each as "page:line: what". */
function problems(page: string): string[] {
  const found: string[] = [];
  const report = (line: number, what: string | undefined) => {
    if (what) found.push(`${page}:${line}: ${what}`);
  };
  for (const b of blocks(readFileSync(join(ROOT, page), 'utf8'))) {
    if (b.fenced) {
      // In a code block, a word is taken for a path when it names a file (an extension), a folder (a trailing /) or
      // starts its line (a layout listing); "styles/glyphs" in the middle of a sentence is words, not a path.
      for (const [i, text] of b.text.split('\n').entries()) {
        const first = text.trimStart().split(/\s/)[0];
        for (const p of repoPaths(text))
          if (p === first || /\.\w+$|\/$/.test(p.replace(/(?::\d+)+$/, ''))) report(b.line + i, checkRepoPath(p));
      }
      continue;
    }
    // inline code: repository paths in it; blanked out before links are looked for
    const prose = b.text.replace(CODE_SPAN, (span, ticks: string, inner: string, offset: number) => {
      for (const p of repoPaths(inner)) report(lineAt(b, offset), checkRepoPath(p));
      return ' '.repeat(span.length);
    });
    for (const m of prose.matchAll(
      /\]\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g,
    ))
      report(lineAt(b, m.index), checkLink(page, m[1]!));
    for (const m of prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*(\S+)/gm)) {
      report(lineAt(b, m.index), checkLink(page, m[1]!));
    }
    for (const m of prose.matchAll(/<(?:a|img)\s[^>]*?\b(?:href|src)="([^"]+)"/g))
      report(lineAt(b, m.index), checkLink(page, m[1]!));
  }
  return found;
}

describe('links and repository paths in the documentation', () => {
  it('reads README.md and the docs/ pages', () => {
    expect(pages()).toContain('README.md');
    expect(pages()).toContain('docs/configuration.md');
  });

  it.each(pages())('%s: every relative link, anchor and repository path exists', (page) => {
    expect(problems(page), `${page} names files or headings that do not exist`).toEqual([]);
  });
});

describe('the checker itself', () => {
  it('computes GitHub anchors', () => {
    expect(slug('Cluster: several nodes sharing PostgreSQL and Redis')).toBe(
      'cluster-several-nodes-sharing-postgresql-and-redis',
    );
    expect(slug('Bursts: admission control')).toBe('bursts-admission-control');
    expect(slug('The `http.body_limit_bytes` key')).toBe('the-httpbody_limit_bytes-key');
    expect(slug('svcmaps keys create')).toBe('svcmaps-keys-create');
    expect(slug('**Bold** and [a link](x.md)')).toBe('bold-and-a-link');
    expect(slug('Start-up: the first answers')).toBe('start-up-the-first-answers');
  });

  it('finds links, code paths and anchors, and lets URLs and operator paths be', () => {
    expect(checkLink('README.md', 'https://example.com/nowhere')).toBeUndefined();
    expect(checkLink('README.md', 'mailto:x@example.com')).toBeUndefined();
    expect(checkLink('README.md', 'docs/cli.md#svcmaps-serve')).toBeUndefined();
    expect(checkLink('docs/cli.md', 'configuration.md#where-the-configuration-comes-from')).toBeUndefined();
    expect(checkLink('docs/cli.md', '#svcmaps-tiles-export')).toBeUndefined();
    expect(checkLink('docs/cli.md', '#svcmaps-nothing')).toMatch(/no heading/);
    expect(checkLink('README.md', 'docs/nothing.md')).toMatch(/does not exist/);
    expect(checkLink('README.md', '../elsewhere.md')).toMatch(/outside/);
    expect(
      repoPaths('sudo cp deploy/nginx.conf /etc/nginx/conf.d/ && node ./scripts/bundle.mjs --out=/var/lib/x'),
    ).toEqual(['deploy/nginx.conf', './scripts/bundle.mjs']);
    expect(repoPaths('SVCMAPS_DATA=/var/lib/svcmaps/src/x npx svcmaps serve')).toEqual([]);
    expect(checkRepoPath('src/app.ts:120')).toBeUndefined();
    expect(checkRepoPath('test/**/*.test.ts')).toBeUndefined();
    expect(checkRepoPath('src/<layer>/')).toBeUndefined();
    expect(checkRepoPath('src/nothing-here.ts')).toMatch(/does not exist/);
  });
});
