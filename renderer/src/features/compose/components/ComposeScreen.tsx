import { useCallback, useEffect } from 'react';
import { useShell } from '../../../lib/shell/index.ts';
import { useModels } from '../../../stores/models/index.ts';
import { findModel } from '../../../stores/models/selectors.ts';
import { toastError, toastSuccess } from '../../../stores/toasts/index.ts';
import { useCompose } from '../../../stores/compose/index.ts';
import { GenerateBar } from './GenerateBar.tsx';
import { MediaToggle } from './MediaToggle.tsx';
import { ModelPicker } from './ModelPicker.tsx';
import { ParametersForm } from './ParametersForm.tsx';
import { PromptBox } from './PromptBox.tsx';
import { ProviderRouting } from './ProviderRouting.tsx';
import { StartFrameDrop } from './StartFrameDrop.tsx';
import { VariationBanner } from './VariationBanner.tsx';
import '../compose.css';

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
  useEffect(() => {
    useCompose.getState().refreshPreview(model);
  }, [model, media, version, params, modelParams, provider, routing, startFrame, variationOf]);

  const generate = useCallback(
    (count: number) => {
      useCompose
        .getState()
        .generate(model, count)
        .then((ids) => {
          if (ids.length === 0) return;
          toastSuccess(ids.length === 1 ? 'Job queued' : `${ids.length} jobs queued`, 'Follow it in the Queue.');
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
    <div className="screen">
      <header className="screen-head">
        <h1>Compose</h1>
        <MediaToggle />
        <span className="spacer" />
      </header>
      <div className="compose">
        <div className="compose-main">
          <VariationBanner />
          <section className="panel">
            <PromptBox />
            {media === 'video' && !variationOf && <StartFrameDrop supported={framesSupported} />}
          </section>
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
        </div>
        <div className="compose-side">
          <ModelPicker selected={model} />
          <ParametersForm model={model} />
          <ProviderRouting model={model} />
        </div>
      </div>
    </div>
  );
}
