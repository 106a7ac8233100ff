export { createLedger, itemsCharge, roundUsd, utcDay } from './ledger.ts';
export type { Charge, Ledger, NewCharge } from './ledger.ts';
export { budgetHold, budgetHoldFor, catalogEstimate, formatUsd } from './budget.ts';
export type { Budget, BudgetCheckOptions, BudgetHold } from './budget.ts';
export { deliveredSince, reconcile, unansweredJobs } from './reconcile.ts';
export type { ReconcileInput } from './reconcile.ts';
export { chargedItemsOf, recoverJob, RecoverError } from './recover.ts';
export type { ChargedItemsDeps, RecoverDeps } from './recover.ts';
