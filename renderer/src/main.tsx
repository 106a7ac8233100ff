// The shared styles first: the screens' own styles, imported by their components, must come after
// them in the cascade so that their rules win at equal specificity.
import './styles/tokens.css';
import './styles/base.css';
import './styles/primitives.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';

const container = document.getElementById('root');
if (!container) throw new Error('#root is missing from index.html');
createRoot(container).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
