import type { Client } from './client.js';

type CheckStatus = 'pending' | 'running' | 'pass' | 'fail' | 'skip';

export interface CheckState {
  id: string;
  label: string;
  status: CheckStatus;
  ms?: number;
  detail?: string;
}

/** What the checks run against: a throwaway appliance (local) or an operator's running server (remote). */
export interface Target {
  mode: 'local' | 'remote';
  url: string;
  client: Client;
  /** Local mode only: a super_admin key, and a way to mint keys with chosen limits (never done to a live server). */
  adminKey?: string;
  makeKey?(o: { perMinute?: number; daily?: number; name?: string }): { id: string; key: string };
  /** Local mode: pairs of road-graph nodes to route between, or null when no graph is imported. Remote: undefined. */
  routePairs?: Array<[[number, number], [number, number]]> | null;
  /** Local mode: the most important named place of each imported places source ([] = only the gazetteer). */
  importedPlaces?: Array<{ source: string; name: string; lat: number; lng: number }>;
}

/** A capability whose data is absent is skipped with the reason, never passed. */
export class Skip {
  constructor(readonly reason: string) {}
}

export interface Check {
  id: string;
  label: string;
  /** Resolves with a one-line detail (pass) or a Skip; throws CheckFailed (or anything) to fail. */
  run(t: Target): Promise<string | Skip>;
}
