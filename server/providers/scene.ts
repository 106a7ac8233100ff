import { createHash } from 'node:crypto';

/**
 * Pure construction of the ffmpeg arguments that render a procedural scene. Everything visible
 * (pattern, colours, speeds, pan path, orbs) comes from a hash of the model, prompt, seed and style,
 * so the same inputs always give the same frames. No randomness, clock or font is involved.
 */

export type Pattern = 'plasma' | 'mandelbrot' | 'life' | 'cellauto';

export interface SceneSpec {
  /** Canonical model id with version, e.g. `clipdesk/motion:1.1`. */
  model: string;
  prompt: string;
  seed: number;
  style?: string;
  width: number;
  height: number;
  /** Frames per second; ignored for stills. */
  fps: number;
  /** Seconds; 0 for a still image. */
  durationSeconds: number;
  /** A decodable start image to animate instead of a generated pattern. */
  startImagePath?: string;
}

export interface SceneArgs {
  /** Input arguments (`-f lavfi -i …` or `-i image`), in order. */
  inputs: string[];
  /** The `-filter_complex` graph; its output is labelled `[out]`. */
  filter: string;
  /** Frames to write: duration × fps for video, 1 for a still. */
  frames: number;
  pattern: Pattern | 'image';
}

/** A small deterministic generator (mulberry32) seeded from the scene hash. */
function createRandom(seedText: string): () => number {
  const digest = createHash('sha256').update(seedText).digest();
  let state = digest.readUInt32LE(0) ^ digest.readUInt32LE(4);
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sceneKey(spec: Pick<SceneSpec, 'model' | 'prompt' | 'seed' | 'style'>): string {
  return JSON.stringify([spec.model, spec.prompt, spec.seed, spec.style ?? '']);
}

/** Interesting places on the Mandelbrot set's boundary to zoom into. */
const MANDELBROT_POINTS: ReadonlyArray<readonly [number, number]> = [
  [-0.743643887037151, 0.13182590420533],
  [-0.7453, 0.1127],
  [-1.25066, 0.02012],
  [-0.16070135, 1.0375665],
  [-0.77568377, 0.13646737],
  [0.001643721971153, -0.822467633298876],
  [-1.768778833, -0.001738996],
  [0.2549870375144766, -0.0005679790528465],
];

/** Elementary automaton rules that make structured, non-trivial pictures. */
const CELLAUTO_RULES = [18, 22, 30, 45, 54, 60, 73, 90, 105, 110, 126, 150];

export function buildScene(spec: SceneSpec): SceneArgs {
  const rand = createRandom(sceneKey(spec));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const between = (lo: number, hi: number) => lo + (hi - lo) * rand();

  const still = spec.durationSeconds <= 0;
  const fps = still ? 1 : spec.fps;
  const frames = still ? 1 : Math.max(1, Math.round(spec.durationSeconds * fps));
  const duration = frames / fps;
  const { width: W, height: H } = spec;
  const [modelBase = '', version = ''] = spec.model.split(':');
  const isDrift = modelBase.endsWith('/drift');
  const withOrbs = isDrift || version !== '1.0' || still;

  const inputs: string[] = [];
  const chains: string[] = [];
  let pattern: SceneArgs['pattern'];

  // Base palette: three phase offsets make the colour cycle of the plasma and the automata.
  const palette = [between(0, 6.283), between(0, 6.283), between(0, 6.283)];
  const hueStart = Math.round(between(0, 360));
  const hueSpeed = still ? 0 : (isDrift ? between(4, 12) : between(15, 45)) * (rand() < 0.5 ? -1 : 1);

  if (spec.startImagePath !== undefined) {
    pattern = 'image';
    inputs.push('-i', spec.startImagePath);
    // Scale once (the image is one frame), then repeat it and pan/zoom across a 2x canvas so the
    // integer crop positions of zoompan move in sub-output-pixel steps.
    const cw = even(W * 2);
    const ch = even(H * 2);
    const zoomIn = rand() < 0.5;
    const zFrom = zoomIn ? 1 : between(1.25, 1.45);
    const zTo = zoomIn ? between(1.25, 1.45) : 1;
    const [x0, y0, x1, y1] = [rand(), rand(), rand(), rand()];
    const last = Math.max(1, frames - 1);
    const lerp = (a: number, b: number) => `(${num(a)}+${num(b - a)}*on/${last})`;
    chains.push(
      `[0:v]trim=end_frame=1,scale=${cw}:${ch}:force_original_aspect_ratio=increase:flags=bicubic,crop=${cw}:${ch},setsar=1,` +
        `format=yuv420p,loop=loop=${frames - 1}:size=1:start=0,setpts=N/${fps}/TB,` +
        `zoompan=z='${lerp(zFrom, zTo)}':x='(iw-iw/zoom)*${lerp(x0, x1)}':y='(ih-ih/zoom)*${lerp(y0, y1)}':d=1:s=${W}x${H}:fps=${fps},` +
        `hue=h=${num(between(-12, 12))}[base]`,
    );
  } else {
    const smallW = even(Math.max(32, Math.round((W / Math.max(W, H)) * 256)));
    const smallH = even(Math.max(32, Math.round((H / Math.max(W, H)) * 256)));
    const options: Pattern[] = isDrift
      ? ['plasma']
      : still
        ? ['plasma', 'mandelbrot', 'cellauto']
        : ['plasma', 'mandelbrot', 'life', 'cellauto'];
    pattern = pick(options);
    const speed = isDrift ? between(0.15, 0.45) : between(0.6, 1.8);
    // Stills sample the pattern at a moment chosen by the hash rather than at t=0.
    const timeShift = still ? num(between(0, 40)) : '0';
    // No duration: the sources run until the output has its frame count (-frames:v).
    const source = `:rate=${fps}`;
    let lavfi: string;
    let upscale = 'bicubic';
    if (pattern === 'plasma') {
      const f = [between(6, 25), between(6, 25), between(12, 44), between(0.5, 2), between(0.5, 2), between(0.5, 2)];
      const cx = num(between(0.2, 0.8) * smallW * 0.625);
      const cy = num(between(0.2, 0.8) * smallH * 0.625);
      const T = `(T+${timeShift})*${num(speed)}`;
      // Inlined rather than kept with st()/ld(): geq runs in slice threads that share those
      // variables, which would make the frames racy and non-deterministic.
      const v =
        `(sin(X/${num(f[0]!)}+${T}*${num(f[3]!)})+sin(Y/${num(f[1]!)}-${T}*${num(f[4]!)})` +
        `+sin(hypot(X-${cx},Y-${cy})/${num(f[2]!)}+${T}*${num(f[5]!)}))`;
      const channel = (phase: number) => `'128+127*sin(${v}*${num(between(1.2, 2.4))}+${num(phase)})'`;
      // The field is smooth, so a coarse grid upscaled with bicubic looks the same and costs less.
      lavfi = `nullsrc=s=${even(smallW * 0.625)}x${even(smallH * 0.625)}${source},geq=r=${channel(palette[0]!)}:g=${channel(palette[1]!)}:b=${channel(palette[2]!)}`;
    } else if (pattern === 'mandelbrot') {
      const [px, py] = pick(MANDELBROT_POINTS);
      const mw = even(smallW * 1.25);
      const mh = even(smallH * 1.25);
      const startScale = between(2, 3.5);
      const endScale = still ? between(0.002, 0.2) : between(0.02, 0.3);
      // A still is one frame, so it starts where a video would end its zoom.
      lavfi =
        `mandelbrot=s=${mw}x${mh}${source}:start_x=${px}:start_y=${py}:start_scale=${num(still ? endScale : startScale)}` +
        `:end_scale=${num(endScale)}:end_pts=${num(still ? 1 : duration * between(0.9, 1.6))}:maxiter=${Math.round(between(96, 192))}` +
        `:outer=${pick(['normalized_iteration_count', 'iteration_count'])}:inner=${pick(['black', 'mincol', 'period'])}`;
    } else if (pattern === 'life') {
      upscale = 'neighbor';
      const lw = even(smallW / 2);
      const lh = even(smallH / 2);
      lavfi =
        `life=s=${lw}x${lh}${source}:seed=${Math.floor(rand() * 2 ** 31)}:ratio=${num(between(0.12, 0.4))}:mold=${Math.round(between(5, 40))}` +
        `:life_color=${hex(rand)}:death_color=${hex(rand, 0.25)}:mold_color=${hex(rand, 0.6)}`;
    } else {
      upscale = 'neighbor';
      const aw = even(smallW / 2);
      const ah = even(smallH / 2);
      const on = [Math.round(between(120, 255)), Math.round(between(60, 255)), Math.round(between(60, 255))];
      const off = [Math.round(between(0, 60)), Math.round(between(0, 60)), Math.round(between(0, 80))];
      const lut = (i: number) => `'if(gt(val,128),${on[i]},${off[i]})'`;
      lavfi =
        `cellauto=rule=${pick(CELLAUTO_RULES)}:s=${aw}x${ah}${source}:seed=${Math.floor(rand() * 2 ** 31)}` +
        `:ratio=${num(between(0.2, 0.6))}:scroll=${still ? 0 : 1},format=rgb24,lutrgb=r=${lut(0)}:g=${lut(1)}:b=${lut(2)}`;
    }
    inputs.push('-f', 'lavfi', '-i', lavfi);
    chains.push(
      `[0:v]scale=${W}:${H}:flags=${upscale},setsar=1,format=yuv420p,hue=h='${hueStart}+${num(hueSpeed)}*t'[base]`,
    );
  }

  let current = 'base';
  if (withOrbs) {
    const count = isDrift ? 3 : 2;
    for (let i = 0; i < count; i++) {
      const size = even(Math.min(W, H) * between(0.18, 0.4));
      const [r, g, b] = [Math.round(between(120, 255)), Math.round(between(80, 255)), Math.round(between(80, 255))];
      const glow = num(between(0.9, 1.6));
      inputs.push('-f', 'lavfi', '-i', `nullsrc=s=64x64:rate=${fps}`);
      const orb = `orb${i}`;
      chains.push(
        `[${inputs.filter((a) => a === '-i').length - 1}:v]format=rgba,` +
          `geq=r=${r}:g=${g}:b=${b}:a='235*pow(max(0,1-hypot(X-31.5,Y-31.5)/32),${glow})',scale=${size}:${size}[${orb}]`,
      );
      const ax = num(between(0.15, 0.4));
      const ay = num(between(0.15, 0.4));
      const fx = num(between(0.2, isDrift ? 0.5 : 1.2));
      const fy = num(between(0.2, isDrift ? 0.5 : 1.2));
      const px = num(between(0, 6.283));
      const py = num(between(0, 6.283));
      const next = `o${i}`;
      chains.push(
        `[${current}][${orb}]overlay=x='(W-w)/2+W*${ax}*sin(t*${fx}+${px})':y='(H-h)/2+H*${ay}*cos(t*${fy}+${py})':eval=frame:shortest=1[${next}]`,
      );
      current = next;
    }
  }

  const finish: string[] = [];
  if (withOrbs && !isDrift && !still) finish.push('vignette=PI/5');
  finish.push(...styleFilters(spec.style));
  // Stills become PNGs: keep full-resolution colour (and odd sizes, which 4:2:0 cannot hold).
  finish.push(still ? 'format=rgb24' : 'format=yuv420p');
  chains.push(`[${current}]${finish.join(',')}[out]`);

  return { inputs, filter: chains.join(';'), frames, pattern };
}

/** The look of each style; unknown or absent styles leave the picture as rendered. */
export function styleFilters(style: string | undefined): string[] {
  switch (style) {
    case 'noir':
      return ['hue=s=0', 'eq=contrast=1.35:brightness=-0.03', 'vignette=PI/4'];
    case 'neon':
      return ['eq=saturation=2.2:contrast=1.2', "hue=h='t*60'"];
    case 'pastel':
      return ['eq=saturation=0.45:brightness=0.18:contrast=0.85'];
    case 'vivid':
      return ['eq=saturation=1.6:contrast=1.1'];
    default:
      return [];
  }
}

function even(n: number): number {
  return Math.max(2, 2 * Math.round(n / 2));
}

/** Fixed-precision numbers keep the filter text identical across runs and platforms. */
function num(n: number): string {
  return Number(n.toFixed(4)).toString();
}

function hex(rand: () => number, scale = 1): string {
  const c = () =>
    Math.round(rand() * 255 * scale)
      .toString(16)
      .padStart(2, '0');
  return `0x${c()}${c()}${c()}`;
}
