/**
 * Runs a job queue in its own process so a test can kill -9 it mid-generation.
 * argv: journalPath baseUrl key idempotency(true|false)
 * Prints one line per job event: `<state> <jobId>`.
 */
import { createApiClient } from '../../../../../electron/core/api/index.ts';
import { createJobJournal, createJobQueue, openJournalDatabase } from '../../../../../electron/core/jobs/index.ts';

const [journalPath, baseUrl, key, idempotency] = process.argv.slice(2);
const api = createApiClient({ baseUrl: baseUrl!, getKey: () => key });
const journal = createJobJournal({ db: openJournalDatabase(journalPath!), now: () => Date.now() });
const queue = createJobQueue({
  journal,
  api,
  idempotency: idempotency === 'true',
  onEvent: (e) => {
    if (e.type === 'job') process.stdout.write(`${e.job.state} ${e.job.id}\n`);
  },
});
await queue.start();
queue.enqueue({
  kind: 'video',
  request: { model: 'clipdesk/motion', prompt: `crash test ${idempotency}`, size: '480p', duration: 4 },
});
// Keep running until killed.
setInterval(() => undefined, 1000);
