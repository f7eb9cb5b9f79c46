import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { open as openFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { startServer, type TestServer } from '../helpers/app.js';
import { bytesOf, tileToken } from '../helpers/tiles.js';
import { PHOTO_MAX_BYTES } from '../../src/places/photos.js';
import { jsonLogger } from '../../src/ops/log.js';

const CID = '00000000000000aa';
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

describe('operator photo files', () => {
  let s: TestServer;
  let t: string;
  let folder: string;
  beforeAll(async () => {
    s = await startServer();
    t = await tileToken(s);
    folder = join(s.dataDir, 'photos', CID);
    mkdirSync(folder, { recursive: true });
  });
  afterAll(() => s?.close());

  const get = (name: string) => s.get(`/maps/v1/place-photo-files/${CID}/${name}?t=${t}`);

  it('serves a photo up to PHOTO_MAX_BYTES with its sniffed type', async () => {
    const exact = Buffer.alloc(PHOTO_MAX_BYTES);
    PNG.copy(exact);
    writeFileSync(join(folder, 'exact.png'), exact);
    writeFileSync(join(folder, 'small.jpg'), PNG); // PNG bytes under a .jpg name: the bytes decide
    const small = await get('small.jpg');
    expect(small.status).toBe(200);
    expect(small.headers.get('content-type')).toBe('image/png');
    expect((await bytesOf(small)).equals(PNG)).toBe(true);
    const big = await get('exact.png');
    expect(big.status).toBe(200);
    expect((await bytesOf(big)).length).toBe(PHOTO_MAX_BYTES);
    expect(s.app.services.photos.operatorPhotos(CID)).toEqual([
      `/maps/v1/place-photo-files/${CID}/exact.png`,
      `/maps/v1/place-photo-files/${CID}/small.jpg`,
    ]);
  });

  it('treats a file one byte over the cap, or a sparse 5 GB file, as absent without reading it', async () => {
    const over = Buffer.alloc(PHOTO_MAX_BYTES + 1);
    PNG.copy(over);
    writeFileSync(join(folder, 'over.png'), over);
    // A 5 GB file that takes no disk: PNG magic, then a hole (readFileSync used to throw on it: a 500).
    const huge = join(folder, 'huge.png');
    const fd = openSync(huge, 'w');
    writeSync(fd, PNG);
    closeSync(fd);
    truncateSync(huge, 5 * 1024 ** 3);
    const rss = process.memoryUsage().rss;
    // Without reading it: no file read while these are answered (the read of a photo under the cap is seen).
    const probe = await openFile(huge, 'r');
    const reads = vi.spyOn(Object.getPrototypeOf(probe) as FileHandle, 'read');
    await probe.close();
    try {
      for (const name of ['over.png', 'huge.png']) {
        const r = await get(name);
        expect(r.status, name).toBe(404);
        expect(r.headers.get('content-type') ?? '', name).not.toMatch(/^image\//);
      }
      expect(reads).not.toHaveBeenCalled();
      writeFileSync(join(folder, 'small.jpg'), PNG);
      expect((await get('small.jpg')).status).toBe(200);
      expect(reads).toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
    expect(process.memoryUsage().rss - rss).toBeLessThan(64 * 1024 * 1024);
    const listed = s.app.services.photos.operatorPhotos(CID);
    expect(listed.some((u) => u.endsWith('/over.png') || u.endsWith('/huge.png'))).toBe(false);
  });

  it('answers 404 for a missing file, a directory or a FIFO under a photo name', async () => {
    mkdirSync(join(folder, 'dir.png'));
    const { spawnSync } = await import('node:child_process');
    const fifo = spawnSync('mkfifo', [join(folder, 'pipe.png')]).status === 0;
    expect((await get('missing.png')).status).toBe(404);
    expect((await get('dir.png')).status).toBe(404);
    if (fifo) expect((await get('pipe.png')).status).toBe(404);
  });
});

describe('operator photo files that cannot be read', () => {
  let s: TestServer;
  let t: string;
  let folder: string;
  const lines: string[] = [];
  beforeAll(async () => {
    s = await startServer({}, { log: jsonLogger('info', (l) => lines.push(l)) });
    t = await tileToken(s);
    folder = join(s.dataDir, 'photos', CID);
    mkdirSync(folder, { recursive: true });
  });
  afterAll(() => s?.close());

  const get = (name: string) => s.get(`/maps/v1/place-photo-files/${CID}/${name}?t=${t}`);
  const logged = () => lines.map((l) => JSON.parse(l) as { level: string; msg: string; error?: string });

  it('answers 500 (logged with the cause, none of it in the body) for an I/O error; only an absent file is a 404', async () => {
    symlinkSync('loop.png', join(folder, 'loop.png')); // a link to itself: open() fails with ELOOP
    const res = await get('loop.png');
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(body).not.toMatch(/ELOOP|loop\.png|photos|\/tmp/); // (a binary route's error is a bare status)
    const line = logged().find((l) => l.msg === 'unhandled error')!;
    expect(line.level).toBe('error');
    expect(line.error).toMatch(/ELOOP/);
    // the folder's listing leaves that photo out, and says so, rather than failing the place's details
    expect(s.app.services.photos.operatorPhotos(CID)).toEqual([]);
    const left = logged().find((l) => l.msg === 'operator photo left out: it cannot be checked')!;
    expect(left.level).toBe('warn');
    expect(left.error).toMatch(/ELOOP/);
    rmSync(join(folder, 'loop.png'));

    expect((await get('gone.png')).status).toBe(404); // ENOENT
    writeFileSync(join(folder, 'file.png'), PNG);
    expect((await get('file.png')).status).toBe(200);
    expect(s.app.services.photos.operatorPhotos(CID)).toEqual([`/maps/v1/place-photo-files/${CID}/file.png`]);
  });

  it.runIf(process.getuid?.() !== 0)('answers 500 for a photo this user may not read (EACCES)', async () => {
    writeFileSync(join(folder, 'private.png'), PNG);
    chmodSync(join(folder, 'private.png'), 0o000);
    try {
      expect((await get('private.png')).status).toBe(500);
      expect(logged().some((l) => l.msg === 'unhandled error' && /EACCES/.test(l.error ?? ''))).toBe(true);
    } finally {
      chmodSync(join(folder, 'private.png'), 0o644);
    }
  });
});
