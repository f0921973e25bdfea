// Building DOM from untrusted text: every string goes in as a text node, never as HTML.
type Child = Node | string | null | undefined | false;

/** `el('td', { class: 'num' }, '12 B')`: attributes set one by one, children appended as nodes or text. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined && c !== false) node.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return node;
}

/** Replaces all children. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  for (const c of children) if (c !== null && c !== undefined && c !== false) parent.append(typeof c === 'string' ? document.createTextNode(c) : c);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`page has no #${id}`);
  return node as T;
}

/** The page's zoom (projector mode's `--zoom`, 1 at 100 %): for sizes drawn in script, which CSS does not scale. */
export function pageZoom(): number {
  const z = parseFloat(getComputedStyle(document.documentElement).getPropertyValue('--zoom'));
  return Number.isFinite(z) && z > 0 ? z : 1;
}

/**
 * Whether a key pressed in `target` is the control's own (typing in a box, choosing in a list) rather than the page's:
 * a checkbox or a button keeps only Space and Enter, so after a click on one the page's keys still work.
 */
export function keysAreTheControls(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target instanceof HTMLInputElement) return !['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file'].includes(target.type);
  return target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement || target.isContentEditable;
}
