import { SYNCED_PROVIDERS } from '../../shared/api/index.ts';
import type { CatalogSyncReport, SyncedProvider, UnpricedModel } from '../../shared/api/index.ts';
import { syncCatalog } from '../catalog/sync/sync.ts';
import { ProviderSettings, readKeyFile } from '../providers/provider-keys.ts';
import { openServiceDatabase } from '../storage/db.ts';
import type { Io, LocationValues } from './commands.ts';
import { resolveLocations } from './locations.ts';
import { UsageError } from './usage-error.ts';

/**
 * `clipdesk-service catalog sync [--provider fal|replicate]… [--dry-run] [--json]`
 * (docs/providers.md, "Syncing the catalog"): reads the providers' listings with this service's
 * keys (the key file, then the environment) and writes the operator catalog a running service on
 * the same data directory or database reloads. Exit 1 when no provider could be read.
 */
export interface CatalogSyncValues extends LocationValues {
  provider?: string[];
  dryRun?: boolean;
  json?: boolean;
}

export async function catalogSyncCommand(values: CatalogSyncValues, io: Io): Promise<number> {
  const providers = (values.provider ?? []).map((name) => {
    const id = name.trim().toLowerCase();
    if (!(SYNCED_PROVIDERS as readonly string[]).includes(id))
      throw new UsageError(
        `--provider must be one of ${SYNCED_PROVIDERS.join(', ')} (the providers with a listing API)`,
      );
    return id as SyncedProvider;
  });
  const { dataDir, database } = resolveLocations(values);
  const settings = new ProviderSettings({ env: process.env, fileKeys: await readKeyFile(dataDir) });
  const db = database.kind === 'postgres' ? await openServiceDatabase(database) : undefined;
  try {
    const report = await syncCatalog({
      dataDir,
      ...(db ? { db } : {}),
      ...(providers.length > 0 ? { providers } : {}),
      credentials: (id) => settings.adapterSettings(id),
      dryRun: values.dryRun === true,
    });
    if (values.json === true) io.out(JSON.stringify(report));
    else for (const line of describeReport(report, values.dryRun === true)) io.out(line);
    return report.providers.some((p) => p.ok) ? 0 : 1;
  } finally {
    await db?.close();
  }
}

/**
 * A listed price the catalog could not take: the model, the unit it was listed in, and what was
 * kept. Models listed without any price are only counted (Replicate lists none).
 */
function describeUnpriced(u: UnpricedModel): string[] {
  if (u.unit === null) return [];
  const why =
    u.kept === 'builtin'
      ? 'which cannot replace its price rule: the built-in rule is kept'
      : 'a unit the catalog cannot charge by: not offered';
  return [`  unpriced\t${u.model} (${u.endpoint}): listed per "${u.unit}", ${why}`];
}

/** The human report: a line per provider, where the catalog went, and its models by media. */
export function describeReport(report: CatalogSyncReport, dryRun: boolean): string[] {
  const lines = report.providers
    .map((p) => {
      if (!p.ok)
        return `${p.provider}\tnot read: ${p.error ?? 'unknown error'}${report.written ? '; its part of the last catalog is kept' : ''}`;
      const left = [
        p.unpriced ? `${p.unpriced} without a price left out` : '',
        p.skipped ? `${p.skipped} malformed or unfit skipped` : '',
      ].filter(Boolean);
      const line = `${p.provider}\t${p.models} models, ${p.prices} prices${left.length > 0 ? ` (${left.join(', ')})` : ''}`;
      return [line, ...(p.unpricedModels ?? []).flatMap(describeUnpriced)];
    })
    .flat();
  const where = report.where ?? 'the operator catalog';
  if (report.written) lines.push(`wrote ${where}`);
  else if (dryRun) lines.push(`dry run: ${where} is unchanged`);
  else lines.push(`nothing written: no provider could be read; ${where} is unchanged`);
  lines.push(`catalog: ${report.models.video} video models, ${report.models.image} image models`);
  return lines;
}
