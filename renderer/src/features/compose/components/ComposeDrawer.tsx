import type { ModelRecord } from '../../../../../shared/api/model-records.ts';
import { ParametersForm } from './ParametersForm.tsx';
import { ProviderRouting } from './ProviderRouting.tsx';
import { SubmitAtControl } from './SubmitAtControl.tsx';

/**
 * The right drawer, closed by default: what a creator sets now and then (provider pin and routing,
 * seed, the model's own parameters such as a negative prompt or guidance, "Submit at", public).
 */
export function ComposeDrawer({ model, onClose }: { model: ModelRecord | undefined; onClose: () => void }) {
  return (
    <aside className="compose-drawer" aria-label="More options">
      <div className="panel-head">
        <h2 className="drawer-title">More options</h2>
        <button type="button" className="btn btn-ghost btn-small" onClick={onClose}>
          Close
        </button>
      </div>
      <ProviderRouting model={model} />
      <ParametersForm model={model} />
      <section className="panel" aria-label="Schedule">
        <h3>Schedule</h3>
        <SubmitAtControl />
      </section>
    </aside>
  );
}
