// Printed before every test run so the log shows which Node the project's scripts ran on
// (the package pins Node 22 through its `node` devDependency; the machine may have another).
console.log(`Node ${process.version} (${process.execPath})`);
if (!process.version.startsWith('v22.')) {
  console.error(
    `Expected Node 22 from the project's devDependency, got ${process.version}. Run npm scripts, not a global node.`,
  );
  process.exit(1);
}
