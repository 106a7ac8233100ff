#!/usr/bin/env node
// The `clipdesk-service` bin: runs the TypeScript CLI directly (Node 22 type stripping; npm
// scripts and npx put the project's Node 22 first on PATH).
await import('../server/cli/main.ts');
