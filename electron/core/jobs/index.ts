export { createJobQueue, JobConflictError } from './queue.ts';
export type { EnqueueInput, JobProgress, JobQueue, JobQueueOptions, QueueEvent, TransferProgress } from './queue.ts';
export { createJobJournal, JobTransitionError } from './journal.ts';
export { INTERRUPTED_MESSAGE, jobStep, needsUpload } from './machine.ts';
export type { JobEffect, JobEvent, JobEventType, JobStep, StepContext } from './machine.ts';
export type { JobJournal, JobPatch, NewJob } from './journal.ts';
export { JOB_STATES, canTransition, holdsSlot, isActive, isFinished, routeFromResponse } from './state.ts';
export type { GenerationInput, Job, JobError, JobErrorCode, JobResult, JobRoute, JobState } from './state.ts';
export {
  concurrencyLimits,
  nextWakeAt,
  queueStats,
  rateLimitWaitMs,
  runningCounts,
  selectJobsToStart,
} from './scheduler.ts';
export type { KindCounts, QueueStats, RateWindow, SchedulerView } from './scheduler.ts';
export { isUnreachable, offlineHold, probeDelayMs, scheduledHold, slotHold, startHold } from './waiting.ts';
export type { JobHold, OfflineState } from './waiting.ts';
export { errorInfo } from './ports.ts';
export type {
  DownloadProgressReport,
  GenerationService,
  JobDownloader,
  StartFrameUploader,
  UploadProgressReport,
} from './ports.ts';
export { openJournalDatabase } from './journal-file.ts';
export { selectJobsToStartWithHolds } from './holds.ts';
export type { HoldCheck } from './holds.ts';
export { findJobItems } from './find-items.ts';
export type { MediaLister } from './find-items.ts';
