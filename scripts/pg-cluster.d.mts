/** Types of pg-cluster.mjs (a throwaway PostgreSQL cluster for tests and benchmarks). */
export interface PgCluster {
  /** The app role's URL: `postgres://promptctx@127.0.0.1:PORT/promptctx`. */
  url: string;
  /** The superuser's URL (database `postgres`). */
  adminUrl: string;
  port: number;
  /** The temp directory: data, log and unix socket. */
  dir: string;
  /** Stops the server and removes the directory. */
  stop(): void;
}

export function findPgBin(): string | null;

export function startCluster(options?: {
  binDir?: string;
  settings?: Record<string, string>;
}): Promise<PgCluster>;

/** Whether the `pgvector` extension is installed for the server `findPgBin()` finds. */
export function hasPgvector(): boolean;
