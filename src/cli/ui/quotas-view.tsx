import { useEffect, useRef, useState } from 'react';
import { Box, Text, useApp, useInput } from 'ink';
import { quotaTable, ratesBetween, type QuotaSnapshot } from '../../ops/quotas.js';

export interface QuotasViewProps {
  /** Reads a fresh snapshot (the store, in the CLI; a fake in tests). */
  load: () => QuotaSnapshot;
  intervalMs: number;
}

const colour = (used: number) => (used >= 0.9 ? 'red' : used >= 0.7 ? 'yellow' : 'green');

/** `svcmaps quotas --watch`: the quota table redrawn every interval, with the request rate between samples. */
export function QuotasView({ load, intervalMs }: QuotasViewProps) {
  const { exit } = useApp();
  const [snap, setSnap] = useState<QuotaSnapshot>(() => load());
  const prev = useRef<QuotaSnapshot | undefined>(undefined);
  const [error, setError] = useState<string | undefined>();
  useInput((input) => {
    if (input === 'q') exit();
  });
  useEffect(() => {
    const t = setInterval(() => {
      try {
        const next = load();
        setSnap((cur) => {
          prev.current = cur;
          return next;
        });
        setError(undefined);
      } catch (e) {
        setError((e as Error).message);
      }
    }, intervalMs);
    return () => clearInterval(t);
  }, [load, intervalMs]);
  const rows = quotaTable(snap, prev.current ? ratesBetween(prev.current, snap) : undefined);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    <Box flexDirection="column">
      <Text bold>
        svcmaps quotas — {snap.day} (UTC) — {snap.keys.length} key{snap.keys.length === 1 ? '' : 's'} — every{' '}
        {intervalMs / 1000}s, q to quit
      </Text>
      {rows.map((r, i) => (
        <Text
          key={i}
          bold={i === 0}
          color={i === 0 ? undefined : colour(snap.keys[i - 1]!.used)}
          dimColor={i > 0 && snap.keys[i - 1]!.state !== 'active'}
        >
          {r
            .map((c, j) => c.padEnd(widths[j]!))
            .join('  ')
            .trimEnd()}
        </Text>
      ))}
      {snap.keys.length === 0 && (
        <Text dimColor>No API keys yet. Create one with: svcmaps keys create --name NAME</Text>
      )}
      {error && <Text color="red">store unreadable: {error}</Text>}
    </Box>
  );
}
