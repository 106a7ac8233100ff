// The CLI and the app against a correct but quirky v1 service: unknown fields everywhere, a 429
// before success, a download cut halfway, model ids with versions.
import { describeV1Flows } from './v1-flows.ts';

describeV1Flows('quirky');
