import { fireEvent, render, screen, type RenderResult } from '@testing-library/react';
import { ComposeScreen } from '../../../../renderer/src/features/compose/components/ComposeScreen.tsx';

/**
 * Compose with everything a form test reaches for in view: the model chip's list and the
 * "More options" drawer (routing, seed, public, the model's own parameters, Submit at), both
 * closed on the canvas until the creator opens them.
 */
export function renderOpenCompose(): RenderResult {
  const result = render(<ComposeScreen />);
  fireEvent.click(screen.getByRole('button', { name: 'More options' }));
  fireEvent.click(screen.getByRole('button', { name: /^Model:/ }));
  return result;
}
