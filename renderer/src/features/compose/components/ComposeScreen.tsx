import { useCallback, useEffect, useState } from 'react';
import { useShell } from '../../../lib/shell/index.ts';
import { useModels } from '../../../stores/models/index.ts';
import { findModel } from '../../../stores/models/selectors.ts';
import { toastError, toastSuccess } from '../../../stores/toasts/index.ts';
import { useCompose } from '../../../stores/compose/index.ts';
import { takesEndFrame } from '../../../../../shared/api/model-parameters.ts';
import { ChainTimeline } from './ChainTimeline.tsx';
import { ComposeDrawer } from './ComposeDrawer.tsx';
import { Filmstrip } from './Filmstrip.tsx';
import { GenerateBar } from './GenerateBar.tsx';
import { MediaToggle } from './MediaToggle.tsx';
import { ModelChip } from './ModelChip.tsx';
import { ParameterChips } from './ParametersForm.tsx';
import { PromptBox } from './PromptBox.tsx';
import { Stage, useSessionTakes } from './Stage.tsx';
import { StartFrameDrop } from './StartFrameDrop.tsx';
import { VariationBanner } from './VariationBanner.tsx';
import '../compose.css';
import '../canvas.css';
import '../canvas-windows.css';

/**
 * Compose is the canvas (docs/workflows.md, "The canvas"): the stage with the newest take and its
 * actions, the session filmstrip under it, the take's shot chain as a timeline (when it is in one),
 * the prompt dock at the bottom, and a drawer of the
 * settings a creator changes now and then, closed by default.
 */
export function ComposeScreen() {
  const models = useModels((s) => s.models);
  const modelsStatus = useModels((s) => s.status);
  const modelId = useCompose((s) => s.modelId);
  const media = useCompose((s) => s.media);
  const submitError = useCompose((s) => s.submitError);
  const restoreNotice = useCompose((s) => s.restoreNotice);
  const variationOf = useCompose((s) => s.variationOf);
  const model = findModel(models, modelId);
  const go = useShell((s) => s.go);
  const [drawer, setDrawer] = useState(false);
  const takes = useSessionTakes();

  useEffect(() => {
    if (modelsStatus === 'idle') void useModels.getState().load();
  }, [modelsStatus]);

  // No model chosen for this kind (first open, another tab): the last one used, else the first.
  useEffect(() => {
    if (modelsStatus === 'ready' && modelId === null) useCompose.getState().preselect(models);
  }, [modelsStatus, models, modelId, media]);

  // The routing preview follows the request: refreshPreview debounces, skips an unchanged request
  // and ignores stale answers, so any change of the composer may call it.
  const version = useCompose((s) => s.version);
  const params = useCompose((s) => s.params);
  const modelParams = useCompose((s) => s.modelParams);
  const provider = useCompose((s) => s.provider);
  const routing = useCompose((s) => s.routing);
  const startFrame = useCompose((s) => s.startFrame);
  const endFrame = useCompose((s) => s.endFrame);
  useEffect(() => {
    useCompose.getState().refreshPreview(model);
  }, [model, media, version, params, modelParams, provider, routing, startFrame, endFrame, variationOf]);

  const generate = useCallback(
    (count: number) => {
      useCompose
        .getState()
        .generate(model, count)
        .then((ids) => {
          if (ids.length === 0) return;
          toastSuccess(
            ids.length === 1 ? 'Job queued' : `${ids.length} jobs queued`,
            'It plays on the stage when it is done.',
          );
        })
        .catch((error: unknown) =>
          toastError('Could not start the generation', error, { label: 'Open Queue', run: () => go('queue') }),
        );
    },
    [model, go],
  );

  // Ctrl/Cmd+Enter generates from anywhere on this screen.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        generate(1);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [generate]);

  const framesSupported = media === 'video' && model?.parameters?.image_url?.supported !== false;

  return (
    <div className="screen canvas-screen">
      <header className="screen-head">
        <h1>Compose</h1>
        <MediaToggle />
        <span className="spacer" />
        <button
          type="button"
          className="btn btn-ghost"
          aria-expanded={drawer}
          aria-controls="compose-drawer"
          onClick={() => setDrawer(!drawer)}
        >
          More options
        </button>
      </header>
      <div className={`canvas${drawer ? ' with-drawer' : ''}`}>
        <div className="canvas-main">
          {/* The stage with the filmstrip under it, or beside it in a short window (canvas-windows.css). */}
          <div className="canvas-view">
            <Stage takes={takes} />
            <Filmstrip takes={takes} />
          </div>
          <ChainTimeline takes={takes} />
          <section className="dock" aria-label="Prompt dock">
            <VariationBanner />
            <div className="dock-inputs">
              {media === 'video' && !variationOf && <StartFrameDrop supported={framesSupported} />}
              {/* The end frame only where the model takes one: its parameters name an image parameter. */}
              {media === 'video' && !variationOf && takesEndFrame(model) && <StartFrameDrop supported slot="end" />}
              <PromptBox />
            </div>
            <div className="dock-chips" role="group" aria-label="Model and settings">
              <ModelChip model={model} />
              {!variationOf && <ParameterChips model={model} />}
            </div>
            {restoreNotice && (
              <div className="notice notice-warning" role="status" aria-label="Not restored">
                {restoreNotice}
              </div>
            )}
            {submitError && (
              <div className="notice notice-error" role="alert">
                {submitError}
              </div>
            )}
            <GenerateBar model={model} onGenerate={generate} />
          </section>
        </div>
        {drawer && (
          <div id="compose-drawer">
            <ComposeDrawer model={model} onClose={() => setDrawer(false)} />
          </div>
        )}
      </div>
    </div>
  );
}
