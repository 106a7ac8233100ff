/**
 * Runs a job queue in its own process against the Local engine (with the Acme test provider), so a
 * test can kill -9 it mid-generation. argv: journalPath baseUrl key. Prints
 * `accepted <jobId> <generationId>` once the journal holds the generation id.
 */
import { createApiClient } from '../../../../electron/core/api/index.ts';
import { createJobJournal, createJobQueue, openJournalDatabase } from '../../../../electron/core/jobs/index.ts';

const [journalPath, baseUrl, key] = process.argv.slice(2);
const api = createApiClient({ baseUrl: baseUrl!, getKey: () => key, poll: { initialMs: 5, maxMs: 20 } });
const journal = createJobJournal({ db: openJournalDatabase(journalPath!), now: () => Date.now() });
let said = false;
const queue = createJobQueue({
  journal,
  api,
  limits: { video: 1, image: 1 },
  onEvent: (e) => {
    if (e.type === 'job' && e.job.generationId && !said) {
      said = true;
      process.stdout.write(`accepted ${e.job.id} ${e.job.generationId}\n`);
    }
  },
});
await queue.start();
queue.enqueue({
  kind: 'video',
  request: { model: 'clipdesk/motion', prompt: 'killed mid-generation', size: '360p', duration: 2, provider: 'acme' },
});
// Keep running until killed.
setInterval(() => undefined, 1000);
