import { createMediaTools } from './electron/core/media/index.ts';
import { mediaStreams } from './test/support/media-streams.ts';
const t = createMediaTools();
const ins = process.argv.slice(3);
await t.sequence(ins, process.argv[2]!, { preset: 'ultrafast' });
for (const f of [...ins, process.argv[2]!]) console.log(f, JSON.stringify(await mediaStreams(f)));
await t.dispose();
