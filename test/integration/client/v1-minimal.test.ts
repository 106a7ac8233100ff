// The CLI and the app against a minimal v1 service: the spec's envelopes and nothing more.
import { describeV1Flows } from './v1-flows.ts';

describeV1Flows('minimal');
