import { parseImageSize, takesEndFrame } from '../../shared/api/index.ts';
import { parametersOf } from '../../shared/api/spec-rules.ts';
import type { ModelRecord } from '../../shared/api/index.ts';
import { UsageError } from './errors.ts';

/** What `clipdesk generate` is about to ask for, before anything is uploaded or submitted. */
export interface GenerateParams {
  kind: 'video' | 'image';
  duration?: number | undefined;
  size?: string | undefined;
  style?: string | undefined;
  provider?: string | undefined;
  /** A start image was given. */
  image: boolean;
  /** An end frame was given (`--end-image`). */
  endImage?: boolean;
}

/** Image size bounds a model record may carry beside its listed values (docs/api.md, "Model record"). */
interface ImageSizeRule {
  values?: string[];
  minWidth?: number;
  minHeight?: number;
  maxWidth?: number;
  maxHeight?: number;
}

/**
 * Checks a request against the model's own parameter rules (from GET /models), so that a bad
 * value is a usage error naming the model's real bounds, not the service's generic schema limit
 * (docs/service.md, "The clipdesk CLI": "duration must be 2–8 s for clipdesk/motion" instead of "expected number to be <=30"). A
 * service that sends no rules is checked against the spec's (docs/api.md "Extensions"); one that
 * lists no providers for the model is asked for any provider (it refuses one it does not have).
 */
export function checkAgainstModel(model: ModelRecord, p: GenerateParams): void {
  const id = model.id;
  if (model.media !== p.kind) {
    throw new UsageError(`${id} makes ${model.media}s; use clipdesk generate ${model.media} --model ${id}`);
  }
  const rules = parametersOf(model);
  if (p.duration !== undefined && rules.duration) {
    const { min, max } = rules.duration;
    if (p.duration < min || p.duration > max) throw new UsageError(`duration must be ${min}–${max} s for ${id}`);
  }
  if (p.size !== undefined) checkSize(model, p.size.trim().toLowerCase());
  if (p.style !== undefined && (model.parameters !== undefined || rules.style)) {
    const styles = rules.style?.values;
    if (!styles) throw new UsageError(`${id} takes no --style`);
    if (!styles.includes(p.style)) throw new UsageError(`style must be one of ${styles.join(', ')} for ${id}`);
  }
  if (p.image && rules.image_url?.supported !== true) throw new UsageError(`${id} takes no start image (--image)`);
  if (p.endImage && !takesEndFrame(model)) throw new UsageError(`${id} takes no end frame (--end-image)`);
  if (p.provider !== undefined && model.providers !== undefined) {
    const wanted = p.provider.toLowerCase();
    const offered = model.providers.some((o) => o.id.toLowerCase() === wanted || o.slug.toLowerCase() === wanted);
    if (!offered) {
      const names = model.providers.map((o) => o.slug).join(', ');
      throw new UsageError(`provider must be one of ${names} for ${id}`);
    }
  }
}

function checkSize(model: ModelRecord, size: string): void {
  const rule = (parametersOf(model).size ?? {}) as ImageSizeRule;
  const values = rule.values ?? [];
  if (model.media !== 'image') {
    if (values.length > 0 && !values.includes(size))
      throw new UsageError(`size must be one of ${values.join(', ')} for ${model.id}`);
    return;
  }
  const [width, height] = parseImageSize(size);
  const bounded = rule.maxWidth !== undefined || rule.maxHeight !== undefined;
  if (!bounded) {
    if (values.length > 0 && !values.includes(size))
      throw new UsageError(`size must be one of ${values.join(', ')} for ${model.id}`);
    return;
  }
  const [minW, minH] = [rule.minWidth ?? 1, rule.minHeight ?? 1];
  const [maxW, maxH] = [rule.maxWidth ?? Infinity, rule.maxHeight ?? Infinity];
  if (width < minW || height < minH || width > maxW || height > maxH) {
    throw new UsageError(`size must be WxH from ${minW}x${minH} to ${maxW}x${maxH} for ${model.id}`);
  }
}
