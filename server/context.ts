import type { RateLimiter } from './limits/rate-limiter.ts';
import type { Generations } from './generation/generations.ts';
import type { GenerationServices } from './generation/services.ts';

/**
 * Everything a request handler needs, wired once by startService (service/build-context.ts): the
 * services the generation layer is lent (GenerationServices), what only the HTTP side reads, and
 * the service's one Generations object, through which every generation is accepted, run,
 * canceled and resumed (docs/architecture.md, "The Generations object").
 */
export interface ServiceContext extends GenerationServices {
  /** `/v1/files/…` answers 302 to the store's presigned URL instead of streaming (stores that have them). */
  fileRedirects: boolean;
  rate: RateLimiter;
  /** This process on this node, `<node>.<run>`: who holds its upload claims (server/uploads/claim-node.ts). */
  claimHolder: string;
  /** The generations of this running service: how they run here, in this process or through the queue. */
  generations: Generations;
}
