export function App() {
  return (
    <main aria-label="Clipdesk">
      <h1>Clipdesk</h1>
    </main>
  );
}
