// Loaded before each test file of the Node projects (vitest.config.ts, setupFiles), to give the
// tests the module order Node itself gives the service and the app.
//
// Native ESM loads every `node:` module of a graph before it runs any module; vitest runs modules in
// the order they are imported. Whichever of `node:http` and the npm undici loads first sets the
// global dispatcher that Node's own fetch uses, and Node's fetch fails through the npm one (a PUT
// with a content-length header). Loading `node:http` first here is what a real start does.
import 'node:http';
