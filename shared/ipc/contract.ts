import { z } from 'zod';
import { eventIterator, oc } from '@orpc/contract';
import { ModelRecord } from '../api/model-records.ts';
import { RoutingPreview } from '../api/routing.ts';
import { ipcErrorMap } from './errors.ts';
import { AppInfo, OpenExternalInput, Ok } from './schemas/app.ts';
import { ModelsList, ModelsListInput, RateLimitState, UsageState } from './schemas/catalog.ts';
import { AppEvent, EventsSubscribeInput } from './schemas/events.ts';
import {
  Job,
  JobId,
  JobRequest,
  JobsList,
  JobsListInput,
  JobsReorder,
  JobsSchedule,
  JobsSubmitBatch,
  QueueStats,
} from './schemas/jobs.ts';
import { ChainView, MoveShotInput, RestoreChainsResult, SequenceInput, ShotTrimInput } from './schemas/chains.ts';
import {
  CollectionCreate,
  CollectionItems,
  CollectionRename,
  CollectionsList,
  DownloadResult,
  ExportInput,
  FeedPage,
  FeedQuery,
  ItemId,
  ItemIds,
  LibraryItem,
  LibraryPage,
  LibraryQuery,
  LocalFile,
  Retain,
  RevealResult,
  SetFavourite,
  SyncInput,
  SyncResult,
} from './schemas/library.ts';
import { Reconciliation, RecoverInput, Spend } from './schemas/ledger.ts';
import { MediaPath, ProbeResult, TrimInput } from './schemas/media.ts';
import {
  ProviderIdInput,
  ProvidersList,
  ProviderSetBaseUrlInput,
  ProviderSetEnabledInput,
  ProviderSetKeyInput,
  ProviderTestResult,
  RefreshModelsInput,
  RefreshModelsResult,
} from './schemas/providers.ts';
import {
  KeyStatus,
  Profile,
  ProfileCreate,
  ProfileId,
  ProfileList,
  ProfileSetBudget,
  ProfileSetKey,
  ProfileUpdate,
} from './schemas/profiles.ts';
import {
  CheckedPath,
  ChoosePathInput,
  ChoosePathResult,
  SetPathInput,
  Settings,
  SettingsPatch,
  TypedPath,
} from './schemas/settings.ts';
import { UploadFromBytes, UploadFromPath, UploadResult } from './schemas/uploads.ts';

/**
 * The IPC contract: every renderer→main capability, as `domain.action` (oRPC path `domain/action`).
 * Both bindings (Electron message port, loopback HTTP) serve exactly this; handlers live in
 * electron/app/handlers. See README.md beside this file for how to add a route.
 */
const route = oc.errors(ipcErrorMap);
const none = z.void();
const count = z.object({ updated: z.number().int().nonnegative() });

export const ipcContract = {
  app: {
    info: route.input(none).output(AppInfo),
    /** http(s) only, validated in main; anything else is `forbidden`. */
    openExternal: route.input(OpenExternalInput).output(Ok),
  },
  settings: {
    get: route.input(none).output(Settings),
    update: route.input(SettingsPatch).output(Settings),
    /** The app: opens the native folder (or file) dialog in main and stores the choice. Browser mode: `not_available`. */
    choosePath: route.input(ChoosePathInput).output(ChoosePathResult),
    /** Browser mode: checks a typed path (`forbidden` with the reason) before the user confirms it. The app: `forbidden`. */
    checkPath: route.input(TypedPath).output(CheckedPath),
    /** Browser mode: checks and stores a typed, confirmed path. Both: `path: null` restores the default. */
    setPath: route.input(SetPathInput).output(Settings),
  },
  profiles: {
    list: route.input(none).output(ProfileList),
    create: route.input(ProfileCreate).output(Profile),
    update: route.input(ProfileUpdate).output(Profile),
    remove: route.input(ProfileId).output(ProfileList),
    activate: route.input(ProfileId).output(Profile),
    keyStatus: route.input(ProfileId).output(KeyStatus),
    setKey: route.input(ProfileSetKey).output(KeyStatus),
    removeKey: route.input(ProfileId).output(KeyStatus),
    /** Daily and monthly spending caps; jobs held by a cap it now allows start. (docs/workflows.md) */
    setBudget: route.input(ProfileSetBudget).output(Profile),
  },
  models: {
    list: route.input(ModelsListInput).output(ModelsList),
    get: route.input(z.object({ id: z.string().min(1).max(200) })).output(ModelRecord),
  },
  providers: {
    /** The Local engine's providers with their key status and settings; a remote profile's `/providers`, read-only. */
    list: route.input(none).output(ProvidersList),
    /** Stores a provider key in the keychain for the Local engine (`keychain_unavailable` when none can). */
    setKey: route.input(ProviderSetKeyInput).output(ProvidersList),
    removeKey: route.input(ProviderIdInput).output(ProvidersList),
    /** One cheap authenticated call to the provider, no generation. */
    testKey: route.input(ProviderIdInput).output(ProviderTestResult),
    setEnabled: route.input(ProviderSetEnabledInput).output(ProvidersList),
    /** Advanced: the provider's API base URL (proxies, regional endpoints); null restores the SDK's. */
    setBaseUrl: route.input(ProviderSetBaseUrlInput).output(ProvidersList),
    /**
     * "Refresh models": the Local engine syncs its catalog from the providers' listings; a remote
     * profile's service keeps its own list (`not_available`).
     */
    refreshModels: route.input(RefreshModelsInput).output(RefreshModelsResult),
  },
  usage: {
    /** `GET /usage` plus the client's rate-limit state. */
    get: route.input(none).output(UsageState),
    /** The rate-limit state alone, without a request to the service. */
    rateLimit: route.input(none).output(RateLimitState),
    /** The ledger against `GET /usage` per key and day: the total, and what was charged but not delivered. (docs/workflows.md) */
    reconcile: route.input(none).output(Reconciliation),
    /** Downloads a charged, undelivered job's media from `/media` (never submits again). (docs/workflows.md) */
    recover: route.input(RecoverInput).output(Reconciliation),
    /** The ledger's charges today and this month, for the top bar's spend meter (no service request). */
    spend: route.input(none).output(Spend),
  },
  jobs: {
    submit: route.input(JobRequest).output(Job),
    submitBatch: route.input(JobsSubmitBatch).output(JobsList),
    list: route.input(JobsListInput).output(JobsList),
    get: route.input(JobId).output(Job),
    cancel: route.input(JobId).output(Job),
    retry: route.input(JobId).output(Job),
    duplicate: route.input(JobId).output(Job),
    reorder: route.input(JobsReorder).output(JobsList),
    /** Removes a finished job from the list (its media stay in the library). */
    remove: route.input(JobId).output(Ok),
    pause: route.input(none).output(QueueStats),
    resume: route.input(none).output(QueueStats),
    stats: route.input(none).output(QueueStats),
    /** Starts a job held by a budget, this once. (docs/workflows.md) */
    submitAnyway: route.input(JobId).output(Job),
    /** "Submit at…" for a queued job (ISO), or null: "Submit now". (docs/workflows.md) */
    schedule: route.input(JobsSchedule).output(Job),
  },
  uploads: {
    fromPath: route.input(UploadFromPath).output(UploadResult),
    fromBytes: route.input(UploadFromBytes).output(UploadResult),
    /** Size, type and dimensions of a local file, for the start-frame warnings before upload. */
    probe: route.input(MediaPath).output(ProbeResult),
  },
  library: {
    query: route.input(LibraryQuery).output(LibraryPage),
    get: route.input(ItemId).output(LibraryItem),
    sync: route.input(SyncInput).output(SyncResult),
    setFavourite: route.input(SetFavourite).output(count),
    retain: route.input(Retain).output(LibraryItem),
    download: route.input(ItemIds).output(DownloadResult),
    reveal: route.input(ItemId).output(RevealResult),
    export: route.input(ExportInput).output(LocalFile),
    /** The last frame as PNG, ready to be a start frame (`{kind:'path', path}`). */
    useLastFrame: route.input(ItemId).output(LocalFile),
    /** Other users' public media (the service's `/media`, not the local index). */
    feed: route.input(FeedQuery).output(FeedPage),
    /** The shot chain of an item, in order. (docs/workflows.md) */
    chain: route.input(ItemId).output(ChainView),
    /** A shot's in and out points in its chain ("Use trimmed clip in chain"). (docs/workflows.md) */
    setShotTrim: route.input(ShotTrimInput).output(ChainView),
    /** Moves a shot to another place in its chain (the timeline's reorder); lineage and trims stay. (docs/workflows.md) */
    moveShot: route.input(MoveShotInput).output(ChainView),
    /** Puts shot chains back from the sidecars in the download folder. (docs/workflows.md) */
    restoreChains: route.input(none).output(RestoreChainsResult),
    /**
     * "Download again": downloads the item anew even when a copy is on disk (replacing it), and
     * answers when the file is written, with the item as the index now knows it.
     */
    downloadAgain: route.input(ItemId).output(LibraryItem),
  },
  collections: {
    list: route.input(none).output(CollectionsList),
    create: route.input(CollectionCreate).output(CollectionsList),
    rename: route.input(CollectionRename).output(CollectionsList),
    remove: route.input(ItemId).output(CollectionsList),
    addItems: route.input(CollectionItems).output(CollectionsList),
    removeItems: route.input(CollectionItems).output(CollectionsList),
  },
  media: {
    /** An H.264 proxy of an item the renderer cannot play. */
    preview: route.input(ItemId).output(LocalFile),
    trim: route.input(TrimInput).output(LocalFile),
    /** Cancels a running media task (see the media.task event). */
    cancel: route.input(z.object({ taskId: z.string().min(1).max(200) })).output(Ok),
    /** A chain's shots back to back (scale and fps normalised); exports go to the download folder. (docs/workflows.md) */
    sequence: route.input(SequenceInput).output(LocalFile),
  },
  events: {
    /** One stream of every AppEvent; optionally filtered by type. */
    subscribe: route.input(EventsSubscribeInput).output(eventIterator(AppEvent)),
  },
  compose: {
    /**
     * docs/workflows.md: what the service's routing would do with this request under each mode (the
     * provider, price, dropped parameters, why), from `POST /routing/preview`. Nothing is uploaded.
     */
    preview: route.input(JobRequest).output(RoutingPreview),
  },
};

export type IpcContract = typeof ipcContract;

/** Every route name, `domain.action`. The bindings allow exactly these. */
export const IPC_ROUTES: readonly string[] = Object.freeze(
  Object.entries(ipcContract).flatMap(([domain, actions]) =>
    Object.keys(actions).map((action) => `${domain}.${action}`),
  ),
);

/** True only for an own route of the contract (never `__proto__`, `constructor`, `toString` …). */
export function isIpcRoute(name: string): boolean {
  return ROUTE_SET.has(name);
}
const ROUTE_SET: ReadonlySet<string> = new Set(IPC_ROUTES);
