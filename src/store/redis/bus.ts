import type { KeyEvents } from '../../auth/ports.js';
import type { RedisClient, RedisFaults } from './client.js';

const CHANNEL = 'svcmaps:keys';

/**
 * Key changes announced to every node over Redis pub/sub. A node that misses a message (Redis down) still sees the
 * change at its next PostgreSQL poll.
 */
export class RedisKeyEvents implements KeyEvents {
  constructor(
    private readonly pub: RedisClient,
    private readonly sub: RedisClient,
    private readonly faults: RedisFaults,
  ) {}

  /** A message that cannot be sent is reported (and the change seen at the next poll, as above). */
  async publishChanged(id: string): Promise<void> {
    if (!this.pub.isReady) return;
    await this.pub.publish(CHANNEL, id).catch((e: unknown) => void this.faults.record(e, 'publish key change'));
  }

  async listen(onChanged: (id: string) => void): Promise<void> {
    await this.sub.subscribe(CHANNEL, (id: string) => onChanged(id));
  }
}
