import type { Linter } from 'eslint';
export declare const boundaries: Linter.Config[];
