/**
 * A provider's contract fake in a process of its own, for benchmarks that must not count its work:
 * `node provider-fake-process.ts fal slow` prints `{baseUrl, key}` as one JSON line, then
 * `{submissions}` whenever the number of jobs created changes. It stops with its parent.
 */
import { startFalFake } from '../../test/fakes/providers/fal.ts';
import type { FakeScenario } from '../../test/fakes/providers/types.ts';

const [provider = 'fal', scenario = 'succeed'] = process.argv.slice(2);
if (provider !== 'fal') throw new Error(`no fake process for ${provider}`);
const fake = await startFalFake({ scenario: scenario as FakeScenario });
console.log(JSON.stringify({ baseUrl: fake.baseUrl, key: fake.key }));
let told = 0;
const timer = setInterval(() => {
  const n = fake.submissions();
  if (n !== told) {
    told = n;
    console.log(JSON.stringify({ submissions: n }));
  }
}, 100);
const stop = () => {
  clearInterval(timer);
  void fake.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('disconnect', stop);
process.stdout.on('error', stop);
