import { db, type Tx } from '@/server/db/client';
import type PgBoss from 'pg-boss';
import type { ClientsImportJob } from '@/server/jobs/queues';
import type { Logger } from '@/server/logger';
import { importClientsChunk, markClientsImportFailed } from '@/server/services/onboarding';
import type { JobOutcome } from '@/server/jobs/outcomes';

/**
 * Background client import (docs/api.md#onboarding: more than 1,000 clients). Each job carries
 * one chunk of up to 1,000 validated, normalised clients; the service upserts it by external_id
 * and advances the clients step in one transaction, so a retry or a replay changes nothing.
 * One outcome per job: a chunk that fails does not hold back the others of its batch; the last
 * allowed attempt marks the clients step and the business `failed`.
 */
export async function importClientsBatch(
  jobs: PgBoss.JobWithMetadata<ClientsImportJob>[],
  log: Logger,
  tx: Tx = db,
): Promise<Map<string, JobOutcome>> {
  const outcomes = new Map<string, JobOutcome>();
  for (const job of jobs) {
    const started = performance.now();
    try {
      const result = await importClientsChunk(job.data, tx);
      log.info(
        {
          business_id: job.data.businessId,
          import_id: job.data.importId,
          chunk: job.data.chunk,
          ...result,
          ms: Math.round(performance.now() - started),
        },
        'clients chunk imported',
      );
      outcomes.set(job.id, { ok: true });
    } catch (err) {
      const error = (err as Error).message ?? String(err);
      log.error(
        { business_id: job.data.businessId, import_id: job.data.importId, chunk: job.data.chunk, err: { message: error } },
        'clients chunk failed',
      );
      if (job.retryCount >= job.retryLimit) {
        await markClientsImportFailed(job.data, error, tx).catch((e) =>
          log.error({ err: { message: (e as Error).message } }, 'could not mark the import failed'),
        );
      }
      outcomes.set(job.id, { ok: false, error });
    }
  }
  return outcomes;
}
