import { createClient } from 'redis';
import type { Logger } from '../../core/log.js';

export type RedisClient = ReturnType<typeof createClient>;

/**
 * A Redis connection that never queues commands while disconnected (a caller sees the fault at once and fails
 * open) and reconnects by itself, so a Redis restart needs no node restart. A subscriber queues instead: its
 * SUBSCRIBE is sent when the connection comes up, and renewed after every reconnect.
 */
export function openRedis(url: string, log: Logger, name: string, queueWhileOffline = false): RedisClient {
  const client = createClient({
    url,
    disableOfflineQueue: !queueWhileOffline,
    socket: { connectTimeout: 1000, reconnectStrategy: (retries: number) => Math.min(50 + retries * 100, 1000) },
  });
  let down = false;
  client.on('error', (e: Error) => {
    if (!down) log.warn('redis unreachable; limits fail open until it returns', { client: name, error: e.message });
    down = true;
  });
  client.on('ready', () => {
    if (down) log.info('redis reachable again', { client: name });
    down = false;
  });
  return client;
}

/** 'ok', or why Redis is not usable now. */
export function redisState(client: RedisClient): string {
  return client.isReady ? 'ok' : 'unreachable';
}
